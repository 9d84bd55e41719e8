#include "ll128_trust.h"

#include <algorithm>
#include <array>

namespace nccltune::fake {

namespace {

constexpr std::array<std::string_view, 10> kPathNames = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                                         "PXB", "P2C", "PXN", "PHB", "SYS"};
constexpr int kLoc = 0, kNvb = 2, kPxb = 5, kPxn = 7, kPhb = 8;

// NCCL versions whose rules differ: NCCL_LL128_C2C exists from 2.27.3 (before, LL128 was trusted
// up to PXN on SM90+, as with it at 1); mixed compute capabilities from SM90 up from 2.30.3.
constexpr int kFirstLl128C2cVersion = 22703;
constexpr int kFirstMixedCompCapVersion = 23003;

// ncclGetUserP2pLevel (src/graph/paths.cc): NCCL_P2P_DISABLE=1 is LOC, else NCCL_P2P_LEVEL as
// ncclGetLevel reads it (normalized_value), else NCCL's default PXB (the AMD exception for two
// GPUs is not modelled: the fake has no CPU vendor).
int p2p_level(const NcclEnv& env) {
  if (const std::optional<long> disable = integer_variable(env, "NCCL_P2P_DISABLE"); disable && *disable == 1)
    return kLoc;
  if (const auto level = env.find("NCCL_P2P_LEVEL"); level != env.end())
    if (const std::optional<int> type = nccl_path_type(normalized_value(level->first, level->second)))
      return *type;
  return kPxb;
}

}  // namespace

std::optional<int> nccl_path_type(std::string_view name) {
  const auto found = std::find(kPathNames.begin(), kPathNames.end(), name);
  if (found == kPathNames.end()) return std::nullopt;
  return static_cast<int>(found - kPathNames.begin());
}

std::string_view nccl_path_name(int type) {
  return type >= 0 && type < static_cast<int>(kPathNames.size()) ? kPathNames[static_cast<std::size_t>(type)]
                                                                 : "?";
}

GraphPaths graph_paths(const FakeModel& model, const NcclEnv& env, int nodes, int local_ranks) {
  GraphPaths paths;
  // ncclTopoComputePaths: GPU pairs beyond the P2P level are diverted through the CPU
  // (addInterStep), which makes their path PHB at least.
  const bool p2p = model.paths.gpu <= p2p_level(env);
  if (local_ranks > 1) paths.intra = p2p ? model.paths.gpu : std::max(model.paths.gpu, kPhb);
  if (nodes <= 1) return paths;
  paths.inter = model.paths.nic;
  // PXN needs the relay GPU reached over NVLink (so P2P on) and GDR, and NCCL_PXN_DISABLE=1 turns
  // it off: the GPU then uses its own path, which is beyond PXN (why NCCL chose PXN).
  if (paths.inter == kPxn) {
    const std::optional<long> disable = integer_variable(env, "NCCL_PXN_DISABLE");
    if ((disable && *disable == 1) || !p2p || !model.nccl_log.gdr) paths.inter = kPhb;
  }
  // Without GPUDirect RDMA a GPU's traffic to the NIC goes through its CPU.
  if (!model.nccl_log.gdr) paths.inter = std::max(paths.inter, kPhb);
  return paths;
}

std::string why_ll128_untrusted(const FakeModel& model, const NcclEnv& env, int nodes, int local_ranks) {
  if (!model.ll128_default) return "ll128_default is false";
  // min/maxCompCap over the communicator's GPUs: the model's devices, cycled per local rank.
  int min_sm = model.devices.front().sm, max_sm = min_sm;
  const std::size_t used = std::min(model.devices.size(), static_cast<std::size_t>(std::max(1, local_ranks)));
  for (std::size_t i = 0; i < used; ++i) {
    min_sm = std::min(min_sm, model.devices[i].sm);
    max_sm = std::max(max_sm, model.devices[i].sm);
  }
  if (min_sm < 70) return "GPUs below SM70";
  const bool mixed_ok = model.nccl_version >= kFirstMixedCompCapVersion && min_sm >= 90;
  if (min_sm != max_sm && !mixed_ok) return "GPUs of different compute capabilities";
  const GraphPaths paths = graph_paths(model, env, nodes, local_ranks);
  if (paths.intra > kNvb)
    return "GPU-to-GPU path " + std::string(nccl_path_name(paths.intra)) + " is beyond NVB";
  bool c2c = true;
  if (model.nccl_version >= kFirstLl128C2cVersion)
    if (const std::optional<long> set = integer_variable(env, "NCCL_LL128_C2C")) c2c = *set != 0;
  const int farthest = c2c && min_sm >= 90 ? kPxn : kPxb;
  if (paths.inter > farthest)
    return "GPU-to-NIC path " + std::string(nccl_path_name(paths.inter)) + " is beyond " +
           std::string(nccl_path_name(farthest));
  return "";
}

}  // namespace nccltune::fake
