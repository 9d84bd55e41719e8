#include "search/node_count_search.h"

#include <algorithm>
#include <cmath>

#include "profile/nccl_names.h"

namespace nccltune {

Env carried_settings(const Env& env) {
  Env carried;
  for (const auto& [name, value] : env)
    if (!is_searched_per_node_count(name)) carried[name] = value;
  return carried;
}

SearchSpace per_count_space(const SearchSpace& space) {
  SearchSpace out = space;
  std::erase_if(out.knobs, [](const Knob& knob) { return !is_searched_per_node_count(knob.name); });
  return out;
}

std::vector<NodeCountResult> run_node_count_plan(const NodeCountPlan& plan, const StrategyOptions& options,
                                                 const ProgressCallback& progress) {
  std::vector<NodeCountResult> results;
  const double shares = 1 + 0.5 * static_cast<double>(std::max<std::size_t>(1, plan.counts.size()) - 1);
  Env carried;
  for (std::size_t i = 0; i < plan.counts.size(); ++i) {
    const int nodes = plan.counts[i];
    const double share = (i == 0 ? 1.0 : 0.5) / shares;
    StrategyOptions count_options = options;
    count_options.budget = std::chrono::seconds(
        std::max<std::int64_t>(1, std::llround(static_cast<double>(options.budget.count()) * share)));
    if (options.max_trials > 0)
      count_options.max_trials = std::max(1, static_cast<int>(std::floor(options.max_trials * share)));
    SearchSpace space = plan.space_for(nodes);
    if (i > 0) {
      count_options.carried = carried;
      count_options.screen_algo_proto_singly = false;
      // Half the trials of the first: the carried settings were screened there, so the best
      // candidate goes to the confirmation without a halving, fewer factors are crossed and the
      // defaults and the confirmation are repeated twice, not three times.
      count_options.halving_candidates = 1;
      count_options.cross_knobs = std::min(count_options.cross_knobs, 2);
      count_options.baseline_repeats = std::min(count_options.baseline_repeats, 2);
      count_options.confirm_rounds = std::min(count_options.confirm_rounds, 2);
      space = per_count_space(space);
    }
    NodeCountResult counted{nodes, run_strategy(space, count_options, plan.executor_for(nodes), progress)};
    if (i == 0) carried = carried_settings(counted.result.env);
    const bool failed = !counted.result.error.empty();
    results.push_back(std::move(counted));
    if (failed) break;
  }
  return results;
}

}  // namespace nccltune
