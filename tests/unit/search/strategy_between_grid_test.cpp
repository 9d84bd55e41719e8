// The confirmation's sizes between the grid's (search/fitted_loss.h): a setting that wins at every
// grid point but loses between them does not ship, and the grid alone stays the profile's results.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dgx_shape.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "search/default_search_space.h"
#include "search/fitted_loss.h"
#include "search/search_space.h"
#include "search/strategy.h"

namespace nccltune {
namespace strategy_between_grid_test {

using test_support::final_sizes;
using test_support::kRanks;
using test_support::load_model;
using test_support::ModelExecutor;


// A trial's answer from the model, with `slow_between` applied to a candidate's confirmation points
// that are not the grid's (busbw times the factor).
struct BetweenRun {
  StrategyResult result;
  std::vector<TrialRequest> confirmations;
};
BetweenRun run_with(const fake::FakeModel& model, double slow_between) {
  ModelExecutor executor(model, kRanks);
  StrategyOptions options;
  options.clock_s = executor.clock();
  const TrialExecutor measure = executor.executor();
  const std::vector<std::uint64_t> grid = final_sizes();
  BetweenRun run;
  run.result = run_strategy(test_support::two_node_space(), options, [&](const TrialRequest& request) {
    TrialMeasurement m = measure(request);
    if (request.phase != TrialPhase::confirm) return m;
    run.confirmations.push_back(request);
    if (request.env.empty()) return m;
    for (std::size_t i = 0; i < m.sizes.size(); ++i)
      if (!std::binary_search(grid.begin(), grid.end(), m.sizes[i])) m.busbw[i] *= slow_between;
    return m;
  });
  return run;
}

// NCCL_NET_GDR_LEVEL=SYS is 15% faster at every size of tune-one-knob.yaml: confirmed, and the
// confirmation measured 1.5x and 3x of the grid's sizes too, while the results hold the grid only.
TEST(StrategyBetweenGrid, TheConfirmationMeasuresBetweenTheGridAndReportsTheGrid) {
  const BetweenRun run = run_with(load_model("tune-one-knob.yaml"), 1.0);
  EXPECT_FALSE(run.result.keep_defaults) << run.result.confirmation;
  ASSERT_FALSE(run.confirmations.empty());
  const std::vector<std::uint64_t> grid = final_sizes();
  std::vector<std::uint64_t> expected = between_grid_sizes(grid);
  expected.insert(expected.end(), grid.begin(), grid.end());
  std::sort(expected.begin(), expected.end());
  for (const TrialRequest& r : run.confirmations) EXPECT_EQ(r.sizes, expected);
  EXPECT_EQ(run.result.sizes, final_sizes());
  EXPECT_EQ(run.result.tuned_busbw.size(), final_sizes().size());
}

// The same env 20% slower at every size between the grid's (a knob whose effect changes between
// grid points): it wins at each grid point and still does not ship, and the verdict says where.
TEST(StrategyBetweenGrid, ASettingThatLosesBetweenTheGridDoesNotShip) {
  const BetweenRun run = run_with(load_model("tune-one-knob.yaml"), 0.8);
  EXPECT_TRUE(run.result.keep_defaults) << run.result.confirmation;
  EXPECT_TRUE(run.result.env.empty());
  EXPECT_NE(run.result.confirmation.find("not confirmed, all_reduce runs -"), std::string::npos)
      << run.result.confirmation;
  EXPECT_NE(run.result.confirmation.find("(measured, between "), std::string::npos) << run.result.confirmation;
}

}  // namespace strategy_between_grid_test
}  // namespace nccltune
