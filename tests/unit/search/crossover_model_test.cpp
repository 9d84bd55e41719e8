// A crossover between grid points in numbers, on tests/fixtures/models/tune-off-grid-crossover.yaml: Tree/LL128 (low
// latency, low bandwidth) beats Ring/LL128, NCCL's own choice, up to about 1.1 MiB. The final grid
// measures 1M and 4M, so the per-size choice built from its points serves Tree/LL128 up to 4M - 1,
// and at 3 MiB it runs slower than NCCL's own choice. Fed the same pair-mode measurements, the
// crossover locator (search/crossover.h) puts the switch between 1M and 2M, near where the model
// has it, and the pair it assigns on each side is within 3% of NCCL's own choice or better at
// 0.75x, 1.5x and 3x of 1M.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/statistics.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "profile/size_ranges.h"
#include "search/crossover.h"
#include "search/strategy.h"
#include "search/trial.h"

namespace nccltune {
namespace {

using test_support::kRanks;

constexpr const char* kOffGridModel = "tune-off-grid-crossover.yaml";
const NcclChoice kTreeLL128{"Tree", "LL128"};
const NcclChoice kRingLL128{"Ring", "LL128"};
const NcclChoice kRingSimple{"Ring", "Simple"};

// Every pair the model has.
std::vector<NcclChoice> every_model_pair() {
  std::vector<NcclChoice> pairs;
  for (const char* algo : {"Ring", "Tree"})
    for (const char* proto : {"LL", "LL128", "Simple"}) pairs.push_back({algo, proto});
  return pairs;
}

// Pair `pair` of `pairs`, measured as the per-size phase measures it: pair mode at the final
// iterations, the median of `rounds` runs (each its own communicator) at each size.
MeasuredTimes pair_times(const test_support::ModelExecutor& execute, const SizeGrid& grid,
                         const std::vector<NcclChoice>& pairs, std::size_t pair, int rounds) {
  std::vector<std::vector<double>> runs;
  MeasuredTimes times;
  for (int round = 0; round < rounds; ++round) {
    TrialRequest request;
    request.phase = TrialPhase::per_size;
    request.grid = grid;
    request.iterations = StrategyOptions{}.final_iterations;
    request.repeat = round;
    request.pairs = pairs;
    const TrialMeasurement m = execute(request);
    EXPECT_EQ(m.outcome, TrialOutcome::ok) << m.reason;
    const TrialMeasurement points = pair_points(m, pairs.size(), pair);
    for (int unavailable : points.unavailable) EXPECT_EQ(unavailable, 0);
    runs.push_back(points.time_us);
    times.sizes = points.sizes;
  }
  times.time_us = median_curve(runs);
  return times;
}

// The model's own, noiseless time of `pair` at `bytes` (NCCL_ALGO/NCCL_PROTO leave it alone).
double model_pair_time(const fake::FakeModel& model, const NcclChoice& pair, std::uint64_t bytes) {
  const auto point = test_support::model_point(model, {{"NCCL_ALGO", pair.algo}, {"NCCL_PROTO", pair.proto}},
                                               kRanks, bytes);
  EXPECT_TRUE(point && point->algo == pair.algo && point->proto == pair.proto);
  return point ? point->time_us : 0;
}

// The first size in (lo, hi] at which `above` is no slower than `below` in the model, by
// bisection on the model's own times: the true crossover, whatever shape its costs have.
std::uint64_t true_crossover(const fake::FakeModel& model, const NcclChoice& below, const NcclChoice& above,
                             std::uint64_t lo, std::uint64_t hi) {
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (model_pair_time(model, above, mid) <= model_pair_time(model, below, mid))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

TEST(OffGridCrossover, TheChoiceServedFromTheGridLosesToNcclsOwnBetweenItsPoints) {
  const fake::FakeModel model = test_support::load_model(kOffGridModel);
  const test_support::ModelExecutor execute(model, kRanks);
  const SizeGrid grid = StrategyOptions{}.final_grid;
  const std::vector<NcclChoice> pairs = every_model_pair();
  // Per size, the fastest pair, as the per-size phase picks it; then the ranges a profile serves.
  std::vector<MeasuredTimes> curves;
  for (std::size_t p = 0; p < pairs.size(); ++p) curves.push_back(pair_times(execute, grid, pairs, p, 3));
  std::vector<SizeChoice> best;
  for (std::size_t i = 0; i < curves.front().sizes.size(); ++i) {
    std::size_t fastest = 0;
    for (std::size_t p = 1; p < pairs.size(); ++p)
      if (curves[p].time_us[i] < curves[fastest].time_us[i]) fastest = p;
    SizeChoice choice;
    choice.algo = pairs[fastest].algo;
    choice.proto = pairs[fastest].proto;
    best.push_back(choice);
  }
  const std::vector<SizeChoice> per_size = size_ranges(curves.front().sizes, best);

  // 3 MiB falls in the range that 1M's winner opened and 4M closes.
  const std::uint64_t job = 3u << 20;
  const SizeChoice* served = choice_for_size(per_size, job);
  ASSERT_NE(served, nullptr);
  EXPECT_EQ(served->algo, kTreeLL128.algo);
  EXPECT_EQ(served->proto, kTreeLL128.proto);
  EXPECT_LE(served->min_bytes, 1u << 20);
  EXPECT_EQ(served->max_bytes, (4u << 20) - 1);

  // There the plugin's Tree/LL128 against NCCL's own choice (Ring/LL128), measured in one
  // communicator as pair mode measures: beyond the 3% a served choice may lose.
  const auto own = test_support::model_point(model, {}, kRanks, job);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->algo, kRingLL128.algo);
  EXPECT_EQ(own->proto, kRingLL128.proto);
  const std::vector<NcclChoice> at_job{kTreeLL128, kNcclOwnChoice};
  const SizeGrid only_job{job, job, 2};
  const double plugin_us = pair_times(execute, only_job, at_job, 0, 1).time_us.at(0);
  const double own_us = pair_times(execute, only_job, at_job, 1, 1).time_us.at(0);
  const double ratio = own_us / plugin_us;  // the plugin's busbw over NCCL's own
  RecordProperty("plugin_vs_nccl_at_3MiB", std::to_string(ratio));
  EXPECT_LT(ratio, 0.97) << "Tree/LL128 " << plugin_us << " us, NCCL's own " << own_us << " us";
}

TEST(OffGridCrossover, TheLocatorPutsTheSwitchBetween1MAnd2MWhereTheModelHasIt) {
  const fake::FakeModel model = test_support::load_model(kOffGridModel);
  const test_support::ModelExecutor execute(model, kRanks);
  const SizeGrid grid = StrategyOptions{}.final_grid;
  const std::vector<NcclChoice> pairs{kTreeLL128, kRingLL128, kRingSimple};
  const MeasuredTimes tree = pair_times(execute, grid, pairs, 0, 3);
  const MeasuredTimes ring = pair_times(execute, grid, pairs, 1, 3);

  const auto found = locate_crossovers(tree, ring);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  const Crossover& c = found->front();
  EXPECT_EQ(c.lo, 1u << 20);
  EXPECT_EQ(c.hi, 4u << 20);
  EXPECT_EQ(c.below, 0u);  // Tree/LL128 below
  ASSERT_EQ(c.fit, CrossoverFit::crossing) << to_string(c.fit);
  EXPECT_GT(c.bytes, 1u << 20);
  EXPECT_LT(c.bytes, 2u << 20);
  // Within 5% of the model's own crossover, found without the locator's arithmetic.
  const std::uint64_t truth = true_crossover(model, kTreeLL128, kRingLL128, c.lo, c.hi);
  RecordProperty("located_bytes", std::to_string(c.bytes));
  RecordProperty("model_bytes", std::to_string(truth));
  EXPECT_NEAR(static_cast<double>(c.bytes), static_cast<double>(truth), 0.05 * static_cast<double>(truth));
  // The fits are the model's costs: each predicts the model's time at the crossover within 2%.
  EXPECT_NEAR(c.first.time_us(static_cast<double>(truth)), model_pair_time(model, kTreeLL128, truth),
              0.02 * model_pair_time(model, kTreeLL128, truth));
  EXPECT_NEAR(c.second.time_us(static_cast<double>(truth)), model_pair_time(model, kRingLL128, truth),
              0.02 * model_pair_time(model, kRingLL128, truth));
  EXPECT_LT(c.first.latency_us, c.second.latency_us);
  EXPECT_LT(c.first.gbps(), c.second.gbps());

  // With the switch there, 0.75x, 1.5x and 3x of 1M run a pair within 3% of NCCL's own choice or
  // better, and the gain below the switch is still there.
  const std::vector<NcclChoice> around{kTreeLL128, kRingLL128, kNcclOwnChoice};
  const SizeGrid job_sizes{768u << 10, 3u << 20, 2};  // 768K, 1.5M, 3M
  const MeasuredTimes tree_at = pair_times(execute, job_sizes, around, 0, 1);
  const MeasuredTimes ring_at = pair_times(execute, job_sizes, around, 1, 1);
  const MeasuredTimes own_at = pair_times(execute, job_sizes, around, 2, 1);
  ASSERT_EQ(own_at.sizes, (std::vector<std::uint64_t>{768u << 10, 3u << 19, 3u << 20}));
  for (std::size_t i = 0; i < own_at.sizes.size(); ++i) {
    const bool tree_side = own_at.sizes[i] < c.bytes;
    const double served_us = tree_side ? tree_at.time_us[i] : ring_at.time_us[i];
    EXPECT_LE(served_us, own_at.time_us[i] / 0.97) << own_at.sizes[i];
    if (tree_side) {
      EXPECT_LT(served_us, own_at.time_us[i] * 0.97) << "the gain below the switch";
    }
  }
}

TEST(OffGridCrossover, TheModelsSecondSwitchIsBetween4MAnd16M) {
  // Ring/LL128 gives way to Ring/Simple near 8.1M, between the grid's 4M and 16M: the grid's
  // boundary (16M) would serve Ring/LL128 at 12M, 5% slower than NCCL's own Ring/Simple.
  const fake::FakeModel model = test_support::load_model(kOffGridModel);
  const test_support::ModelExecutor execute(model, kRanks);
  const std::vector<NcclChoice> pairs{kTreeLL128, kRingLL128, kRingSimple};
  const SizeGrid grid = StrategyOptions{}.final_grid;
  const auto found = locate_crossovers(pair_times(execute, grid, pairs, 1, 3), pair_times(execute, grid, pairs, 2, 3));
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  const Crossover& c = found->front();
  EXPECT_EQ(c.lo, 4u << 20);
  EXPECT_EQ(c.hi, 16u << 20);
  ASSERT_TRUE(c.fitted()) << to_string(c.fit);
  const std::uint64_t truth = true_crossover(model, kRingLL128, kRingSimple, c.lo, c.hi);
  EXPECT_NEAR(static_cast<double>(c.bytes), static_cast<double>(truth), 0.05 * static_cast<double>(truth));
  EXPECT_LT(c.bytes, 12u << 20);
}

}  // namespace
}  // namespace nccltune
