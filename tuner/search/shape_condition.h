// Conditions on the cluster shape that decide which knobs and values a search space offers:
// `nodes>1`, `nvswitch`, `!nvswitch`, `nics>0`, `nics>gpus_per_node`, `nccl>=2.24`, `gpu_sm>=90`,
// either of two (`gpus_per_node>=3|nccl>=2.28.7`), and what is tuned: `collective=all_gather` (a
// knob or value for some collectives only).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccltune {

// What conditions are evaluated against. 0 in nccl_version / gpu_sm means "unknown": every
// comparison on an unknown fact holds, so the search explores rather than guesses (a value the
// library does not support costs one failed trial).
struct ShapeFacts {
  int nodes = 1;
  int gpus_per_node = 1;
  bool nvswitch = false;
  int nics = 0;          // NICs per node
  // The `nics` are InfiniBand or RoCE NICs: NCCL's IB transport runs and reads NCCL_IB_*. The
  // condition `ib` holds when this is true and nics > 0; otherwise NCCL uses its Socket transport.
  bool ib = true;
  // GPUDirect RDMA between the GPUs and the NICs (NCCL_NET_GDR_* act only with it); nullopt:
  // unknown, and both `gdr` and `!gdr` hold.
  std::optional<bool> gdr;
  int nccl_version = 0;  // NCCL's code, 22809 for 2.28.9
  int gpu_sm = 0;        // 90 for Hopper
  // The collectives tuned (nccl-tests names); empty: unknown, and every collective condition holds.
  std::vector<std::string> collectives;
};

// Conditions: `fact OP number` with OP one of >= <= > < == != over the numeric facts nodes,
// gpus_per_node, ranks (nodes x gpus_per_node), nics, nccl (a version: 2.24, 2.24.3 or 22403),
// gpu_sm; `count OP count` between two of the counts nodes, gpus_per_node, ranks, nics
// (`nics>gpus_per_node`: more NICs than GPUs on a node); or `nvswitch` / `!nvswitch`, `ib` / `!ib`,
// `gdr` / `!gdr`; or `collective=NAME[|NAME...]`, which holds when one of the
// named collectives (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall) is
// tuned. Outside a collective condition, `A|B` holds when A or B does (`gpus_per_node>=3|nccl>=2.28.7`).
// Spaces are ignored. Checked at parse time.
std::optional<std::string> condition_problem(std::string_view condition);   // nullopt when valid
bool condition_holds(std::string_view condition, const ShapeFacts& facts);  // invalid: false
bool all_conditions_hold(const std::vector<std::string>& conditions, const ShapeFacts& facts);

}  // namespace nccltune
