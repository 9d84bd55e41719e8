// The NVLink fabric part of `nccltune check`: each GPU that has a fabric registered with it, its
// health, and the GPUs of the node in one NVLink domain. A node whose GPUs have no fabric (PCIe,
// NVLink bridges, a driver or snapshot that does not say) gets no fabric findings.
#pragma once

#include <vector>

#include "topology/checks.h"

namespace nccltune {

// `nvlink_fabric` per GPU: fails unless the registration is COMPLETED, which NCCL needs to take
// the GPU into a multi-node NVLink domain (src/mnnvl.cc) and CUDA to use NVLink at all on an
// NVSwitch node, and when the probe's status says it failed ("Insufficient Resources").
// `fabric_health` per GPU: warns on each health field that reports a problem. `nvlink_domain` for the node: fails when its registered GPUs disagree on the
// cluster UUID or the clique id, since NCCL puts GPUs in one clique only when both match.
void check_fabric(const NodeTopology& topology, std::vector<Finding>& out);

}  // namespace nccltune
