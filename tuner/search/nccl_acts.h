// Knobs NCCL cannot act on in a cluster, whatever a search space's `when` says: they are never
// swept there, so they never ship (prune, search_space.h). Each follows what NCCL reads where
// (tests/fake-gpu/FIDELITY.md F30, F31, F33 model the same rules in the fake NCCL):
//   - NCCL_IB_*: read by the IB transport only (src/transport/net_ib.cc; net_ib/ from 2.30), which
//     runs on InfiniBand or RoCE NICs (`ib`) and only between nodes;
//   - NCCL_NET_GDR_*, NCCL_GDRCOPY_*: act only where NIC and GPU support GPUDirect RDMA
//     (ncclTopoCheckGdr, src/graph/paths.cc), over the network (`gdr`, an RDMA NIC, 2+ nodes);
//     tune's `gdr` is the nodes' NodeType::gdr (tune_profile/cluster_shape.h), unknown keeps them;
//   - NCCL_NVLS_*: NVLS needs NVSwitch multicast and 2 or more GPUs on a node (ncclNvlsInit,
//     src/transport/nvls.cc).
#pragma once

#include <optional>
#include <string>

#include "search/shape_condition.h"

namespace nccltune {

// Why NCCL cannot act on knob `name` in a cluster of `facts`, or nullopt when it may.
std::optional<std::string> why_nccl_cannot_act(const std::string& name, const ShapeFacts& facts);

// Whether NCCL_NVLS_ENABLE's `value` forces NVLS (anything but 0 and 2, read as NCCL reads an
// integer): NCCL then skips the multicast check and fails init where there is none
// (src/transport/nvls.cc), so a profile never ships it; 2, NCCL's default, already uses NVLS
// wherever it can.
bool forces_nvls(const std::string& value);

}  // namespace nccltune
