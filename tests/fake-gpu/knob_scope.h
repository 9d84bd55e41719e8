// Where NCCL lets a variable act, whatever a model's `effects` say (FIDELITY.md F30-F32): an
// effect whose variables NCCL never reads on this communicator, or reads only for pairs the model
// did not scope it to, acts as NCCL lets it, so a knob never looks like a gain NCCL would not give.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_model.h"

namespace nccltune::fake {

// The variables only NCCL's IB transport reads (src/transport/net_ib.cc at 2.28.9,
// src/transport/net_ib/ at 2.30.7): they act only where the network is IB or RoCE, and only on a
// communicator of more than one node (one node uses no network).
bool is_ib_transport_variable(std::string_view name);
// GPUDirect RDMA's variables (NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ, NCCL_NET_GDR_C2C,
// NCCL_GDRCOPY_*): they act only where NIC and GPU both support GDR (`nccl_log.gdr`). NCCL
// checks GDR for network connections only, so they act on nothing on one node either; the fake
// leaves that to the model's `nodes` entries (FIDELITY.md F31).
bool is_gdr_variable(std::string_view name);

// The pairs NCCL lets a variable act on (src/graph/tuning.cc ncclTopoTuneModel, src/enqueue.cc
// topoGetAlgoInfo, src/init.cc computeBuffSizes); empty lists: any.
struct PairScope {
  std::vector<std::string> algos;
  std::vector<std::string> protos;
};
std::optional<PairScope> nccl_pair_scope(std::string_view variable);

// `effect` as NCCL lets it act on a communicator of `nodes` nodes with network `log`: nullopt
// when a variable it sets (a value other than unset) cannot act there, else the effect with its
// pair scope narrowed to where each of its variables acts (nullopt when nothing is left).
std::optional<Effect> effect_as_nccl_acts(const Effect& effect, const NcclLogModel& log, int nodes);

}  // namespace nccltune::fake
