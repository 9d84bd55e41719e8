// tune --node-counts: one search per node count of one allocation, at most 1 + 0.5 (K - 1) times
// the trials of one count. The largest count is searched in full. Its winners whose effect does not
// depend on the node count (transport: GDR level, QPs, NICs, ...; is_transport_setting), and any
// other it shipped that is not searched per count, are carried to every smaller count: screened
// there as one candidate and crossed with the rest, so they ship there only when they still beat
// the defaults. The algorithm, the protocol and the channel bounds (is_searched_per_node_count) are
// searched at every count, NCCL_ALGO x NCCL_PROTO as pairs measured under the carried settings,
// and so are the per-size choices. Pure: each count's trials run through its own executor.
#pragma once

#include <functional>
#include <vector>

#include "search/search_space.h"
#include "search/strategy.h"

namespace nccltune {

struct NodeCountResult {
  int nodes = 0;
  StrategyResult result;
};

struct NodeCountPlan {
  std::vector<int> counts;                         // largest first (node_count_plan's order)
  std::function<SearchSpace(int)> space_for;       // the space pruned for that count's shape
  std::function<TrialExecutor(int)> executor_for;  // trials on communicators of that many nodes
};

// Every count's result, in the plan's order; stops after a count whose defaults fail (its error
// set). The budget and max_trials are shared: the largest count gets 1 / (1 + 0.5 (K - 1)) of
// them, each other count half that.
std::vector<NodeCountResult> run_node_count_plan(const NodeCountPlan& plan, const StrategyOptions& options,
                                                 const ProgressCallback& progress = {});

// What the largest count's env carries to the others: every setting not searched per count.
Env carried_settings(const Env& env);

// `space` with only the knobs searched per node count.
SearchSpace per_count_space(const SearchSpace& space);

}  // namespace nccltune
