// The per-size phase's crossover refinement (search/crossover_refinement.h) against costs whose
// crossing is known: probes around the fitted crossing until the bracket is within 1.25 or the two
// pairs are within the noise across it, all gaps in one pair-mode request per iteration holding
// only their pairs, collectives and communicators, the sizes the run returns rather than those
// asked, and no run at all without a runner or once the budget refuses.
#include "search/crossover_refinement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nccltune {
namespace {

const NcclChoice kRefineTree{"Tree", "LL128"};
const NcclChoice kRefineRing{"Ring", "LL128"};
const NcclChoice kRefineSimple{"Ring", "Simple"};

// time = latency + bytes / bandwidth (GB/s): NCCL's model, exactly.
struct LineCost {
  double latency_us = 0, gbps = 1;
  double at(std::uint64_t bytes) const { return latency_us + static_cast<double>(bytes) / (gbps * 1e3); }
};
// Tree/LL128 to Ring/LL128 at 1.92M, Ring/LL128 to Ring/Simple at 5.83M.
constexpr LineCost kTreeCost{5, 16}, kRingCost{80, 42.5}, kSimpleCost{120, 60};

double crossing_of(const LineCost& below, const LineCost& above) {
  return (above.latency_us - below.latency_us) / (1 / (below.gbps * 1e3) - 1 / (above.gbps * 1e3));
}

// Every fourth power of two from 16K to 64M: the final grid's middle and top.
std::vector<std::uint64_t> refine_grid() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 16 << 10; bytes <= 64u << 20; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

MeasuredTimes line_on_grid(const LineCost& cost) {
  MeasuredTimes times;
  times.sizes = refine_grid();
  for (const std::uint64_t bytes : times.sizes) times.time_us.push_back(cost.at(bytes));
  return times;
}

CrossoverGap line_gap(const ShapedOp& op, const NcclChoice& below, const LineCost& below_cost,
                      const NcclChoice& above, const LineCost& above_cost, std::uint64_t lo,
                      std::uint64_t hi) {
  return {op, below, above, lo, hi, line_on_grid(below_cost), line_on_grid(above_cost)};
}

TrialRequest refine_base() {
  TrialRequest base;
  base.phase = TrialPhase::per_size;
  base.iterations = 20;
  base.collectives = {kAllReduce, "all_gather"};
  base.comms = {"world", "rail"};
  return base;
}

// A pair-mode run answered from line costs, pair-major, then collective, communicator and size,
// as the worker sweeps; each size rounded down to `element` bytes, as a collective rounds it.
struct LineRunner {
  std::map<std::string, LineCost> costs;  // by "Algo/Proto"
  std::uint64_t element = 1;
  std::vector<TrialRequest> requests;
  std::function<bool(const NcclChoice&, std::uint64_t)> unavailable = [](const NcclChoice&, std::uint64_t) {
    return false;
  };

  std::optional<TrialMeasurement> operator()(const TrialRequest& r) {
    requests.push_back(r);
    TrialMeasurement m;
    for (const NcclChoice& pair : r.pairs) {
      for (const std::string& op : r.collectives)
        for (const std::string& comm : r.comms)
          for (const std::uint64_t asked : r.sizes) {
            const std::uint64_t bytes = asked / element * element;
            m.ops.push_back(op);
            m.comms.push_back(comm);
            m.sizes.push_back(bytes);
            m.time_us.push_back(costs.at(pair.algo + "/" + pair.proto).at(bytes));
            m.unavailable.push_back(unavailable(pair, bytes) ? 1 : 0);
          }
      m.pair_outcomes.push_back(TrialOutcome::ok);
    }
    return m;
  }
};

LineRunner tree_ring_simple_runner() {
  LineRunner runner;
  runner.costs = {{"Tree/LL128", kTreeCost}, {"Ring/LL128", kRingCost}, {"Ring/Simple", kSimpleCost}};
  return runner;
}

ProbeRunner runner_of(LineRunner& runner) {
  return [&runner](const TrialRequest& r) { return runner(r); };
}

const ShapedOp kWorldAllReduce{kAllReduce, CommRole::world};

TEST(CrossoverRefinement, OneRunAroundTheFittedCrossingBracketsItWithin125) {
  LineRunner runner = tree_ring_simple_runner();
  const auto switches = refine_crossovers(
      {line_gap(kWorldAllReduce, kRefineTree, kTreeCost, kRefineRing, kRingCost, 1 << 20, 4 << 20)},
      refine_base(), 0.01, runner_of(runner));
  // The fit of the grid's points is exact, so one run at crossing / 1.11 and crossing * 1.11
  // settles it, with only the bracket's two pairs and the gap's own collective and communicator.
  ASSERT_EQ(runner.requests.size(), 1u);
  const TrialRequest& r = runner.requests.front();
  EXPECT_EQ(r.pairs, (std::vector<NcclChoice>{kRefineTree, kRefineRing}));
  EXPECT_EQ(r.collectives, std::vector<std::string>{kAllReduce});
  EXPECT_EQ(r.comms, std::vector<std::string>{"world"});
  EXPECT_EQ(r.phase, TrialPhase::per_size);
  EXPECT_EQ(r.iterations, 20);
  const double truth = crossing_of(kTreeCost, kRingCost);
  ASSERT_EQ(r.sizes.size(), 2u);
  EXPECT_NEAR(static_cast<double>(r.sizes[0]), truth / kProbeSpread, 2);
  EXPECT_NEAR(static_cast<double>(r.sizes[1]), truth * kProbeSpread, 2);

  ASSERT_EQ(switches.size(), 1u);
  ASSERT_EQ(switches.at(kWorldAllReduce).size(), 1u);
  const SizeSwitch& s = switches.at(kWorldAllReduce).front();
  EXPECT_EQ(s.fit, "crossing");
  EXPECT_EQ(s.below, "Tree/LL128");
  EXPECT_EQ(s.above, "Ring/LL128");
  EXPECT_EQ(s.lo, r.sizes[0]);
  EXPECT_EQ(s.hi, r.sizes[1]);
  EXPECT_LE(static_cast<double>(s.hi), kSettledRatio * static_cast<double>(s.lo));
  EXPECT_GT(s.bytes, s.lo);
  EXPECT_LE(s.bytes, s.hi);
  EXPECT_NEAR(static_cast<double>(s.bytes), truth, 1);
  EXPECT_NEAR(s.below_latency_us, 5, 1e-6);
  EXPECT_NEAR(s.below_gbps, 16, 1e-6);
  EXPECT_NEAR(s.above_latency_us, 80, 1e-6);
  EXPECT_NEAR(s.above_gbps, 42.5, 1e-6);
}

TEST(CrossoverRefinement, WithoutARunnerTheSwitchIsTheFinalGridsFit) {
  // Without pair mode (each pair a communicator) nothing is measured: the bracket stays the grid
  // gap, and the switch goes where the grid's fits cross, with their verdict.
  const auto switches = refine_crossovers(
      {line_gap(kWorldAllReduce, kRefineTree, kTreeCost, kRefineRing, kRingCost, 1 << 20, 4 << 20)},
      refine_base(), 0.01, {});
  ASSERT_EQ(switches.at(kWorldAllReduce).size(), 1u);
  const SizeSwitch& s = switches.at(kWorldAllReduce).front();
  EXPECT_EQ(s.lo, 1u << 20);
  EXPECT_EQ(s.hi, 4u << 20);
  EXPECT_EQ(s.fit, "crossing");
  EXPECT_NEAR(static_cast<double>(s.bytes), crossing_of(kTreeCost, kRingCost), 1);
}

TEST(CrossoverRefinement, ARefusedRunLeavesTheGridsFit) {
  int asked = 0;
  const auto switches = refine_crossovers(
      {line_gap(kWorldAllReduce, kRefineTree, kTreeCost, kRefineRing, kRingCost, 1 << 20, 4 << 20)},
      refine_base(), 0.01, [&](const TrialRequest&) -> std::optional<TrialMeasurement> {
        ++asked;
        return std::nullopt;  // the budget says no
      });
  EXPECT_EQ(asked, 1);
  const SizeSwitch& s = switches.at(kWorldAllReduce).front();
  EXPECT_EQ(s.lo, 1u << 20);
  EXPECT_EQ(s.hi, 4u << 20);
  EXPECT_EQ(s.fit, "crossing");
}

TEST(CrossoverRefinement, AllGapsShareOneRunPerIterationAndUseTheSizesItReturns) {
  // Two shapes' gaps: all_reduce on the world (Tree -> Ring, 1M to 4M) and all_gather on the
  // rails (Ring LL128 -> Simple, 4M to 16M).
  // One request holds both collectives, both communicators, the three pairs and both gaps'
  // probes; each gap takes its own shape's points, at the sizes the run rounded down.
  LineRunner runner = tree_ring_simple_runner();
  runner.element = 4096;
  const ShapedOp rail_all_gather{"all_gather", CommRole::rail};
  const auto switches = refine_crossovers(
      {line_gap(kWorldAllReduce, kRefineTree, kTreeCost, kRefineRing, kRingCost, 1 << 20, 4 << 20),
       line_gap(rail_all_gather, kRefineRing, kRingCost, kRefineSimple, kSimpleCost, 4 << 20, 16 << 20)},
      refine_base(), 0.01, runner_of(runner));
  ASSERT_EQ(runner.requests.size(), 1u);
  const TrialRequest& r = runner.requests.front();
  EXPECT_EQ(r.pairs, (std::vector<NcclChoice>{kRefineTree, kRefineRing, kRefineSimple}));
  EXPECT_EQ(r.collectives, (std::vector<std::string>{kAllReduce, "all_gather"}));
  EXPECT_EQ(r.comms, (std::vector<std::string>{"world", "rail"}));
  EXPECT_EQ(r.sizes.size(), 4u);
  for (const auto& [op, expected] : {std::pair{kWorldAllReduce, crossing_of(kTreeCost, kRingCost)},
                                     std::pair{rail_all_gather, crossing_of(kRingCost, kSimpleCost)}}) {
    ASSERT_EQ(switches.at(op).size(), 1u);
    const SizeSwitch& s = switches.at(op).front();
    EXPECT_EQ(s.lo % 4096, 0u) << s.lo;
    EXPECT_EQ(s.hi % 4096, 0u) << s.hi;
    EXPECT_LE(static_cast<double>(s.hi), kSettledRatio * static_cast<double>(s.lo));
    EXPECT_NEAR(static_cast<double>(s.bytes), expected, 1) << s.fit;
  }
}

TEST(CrossoverRefinement, PairsWithinTheNoiseAcrossTheGapCostNoRun) {
  // Two pairs 0.2% apart at both ends of the gap, in turn: no measurement could place the switch
  // between them, and it stays at the grid's gap.
  CrossoverGap gap{kWorldAllReduce,
                   kRefineTree,
                   kRefineRing,
                   1 << 20,
                   4 << 20,
                   {{256 << 10, 1 << 20, 4 << 20}, {30, 100, 400}},
                   {{256 << 10, 1 << 20, 4 << 20}, {31, 100.2, 399.2}}};
  LineRunner runner = tree_ring_simple_runner();
  const auto switches = refine_crossovers({gap}, refine_base(), 0.005, runner_of(runner));
  EXPECT_TRUE(runner.requests.empty());
  ASSERT_EQ(switches.at(kWorldAllReduce).size(), 1u);
  EXPECT_EQ(switches.at(kWorldAllReduce).front().lo, 1u << 20);
  EXPECT_EQ(switches.at(kWorldAllReduce).front().hi, 4u << 20);
}

TEST(CrossoverRefinement, AProbeWhereAPairIsNotOfferedAddsNothingAndEndsThatGap) {
  LineRunner runner = tree_ring_simple_runner();
  runner.unavailable = [](const NcclChoice& pair, std::uint64_t) { return pair == kRefineRing; };
  const auto switches = refine_crossovers(
      {line_gap(kWorldAllReduce, kRefineTree, kTreeCost, kRefineRing, kRingCost, 1 << 20, 4 << 20)},
      refine_base(), 0.01, runner_of(runner));
  EXPECT_EQ(runner.requests.size(), 1u);  // not run again for nothing
  EXPECT_EQ(switches.at(kWorldAllReduce).front().lo, 1u << 20);
  EXPECT_EQ(switches.at(kWorldAllReduce).front().hi, 4u << 20);
}

TEST(CrossoverRefinement, AGapWhoseWinnersTheTimesDoNotShowHasNoSwitch) {
  // The pairs tie at the gap's lower size: the times show no change of winner inside it.
  CrossoverGap gap{kWorldAllReduce,
                   kRefineTree,
                   kRefineRing,
                   1 << 20,
                   4 << 20,
                   {{256 << 10, 1 << 20, 4 << 20}, {30, 100, 400}},
                   {{256 << 10, 1 << 20, 4 << 20}, {40, 100, 300}}};
  EXPECT_TRUE(refine_crossovers({gap}, refine_base(), 0.01, {}).empty());
}

TEST(CrossoverInGap, SeveralChangesInsideTheGapMakeOneBracketOverThem) {
  // Tree, Ring, Tree, Ring: the noise flips two close pairs; the bracket spans the flips.
  const MeasuredTimes tree{{1 << 20, 3 << 19, 2 << 20, 5 << 19, 4 << 20}, {100, 140, 181, 230, 400}};
  const MeasuredTimes ring{{1 << 20, 3 << 19, 2 << 20, 5 << 19, 4 << 20}, {110, 139, 182, 229, 300}};
  const auto c = crossover_in_gap(tree, ring, 1 << 20, 4 << 20);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->lo, 1u << 20);
  EXPECT_EQ(c->hi, 5u << 19);
  EXPECT_EQ(c->below, 0u);
  EXPECT_GT(c->bytes, c->lo);
  EXPECT_LE(c->bytes, c->hi);
}

TEST(CrossoverInGap, OnlyTheBracketInsideTheGapCounts) {
  // The change between 1M and 4M belongs to that gap, not to the one above it.
  const auto c = crossover_in_gap(line_on_grid(kTreeCost), line_on_grid(kRingCost), 1 << 20, 4 << 20);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->lo, 1u << 20);
  EXPECT_EQ(c->hi, 4u << 20);
  EXPECT_FALSE(crossover_in_gap(line_on_grid(kTreeCost), line_on_grid(kRingCost), 4 << 20, 16 << 20));
}

TEST(ProbeSizes, AroundAFittedCrossingElseTheGeometricMiddle) {
  Crossover c;
  c.lo = 1 << 20;
  c.hi = 4 << 20;
  c.bytes = 1500000;
  c.fit = CrossoverFit::crossing;
  EXPECT_EQ(probe_sizes(c), (std::vector<std::uint64_t>{1351351, 1665000}));
  c.bytes = 1100000;  // below / 1.11 is under lo: only the probe above
  EXPECT_EQ(probe_sizes(c), (std::vector<std::uint64_t>{1221000}));
  c.fit = CrossoverFit::outside_bracket;
  c.bytes = c.hi;
  EXPECT_EQ(probe_sizes(c), (std::vector<std::uint64_t>{2u << 20}));
  c.lo = 10;
  c.hi = 11;
  EXPECT_TRUE(probe_sizes(c).empty());  // no whole byte inside
}

TEST(BracketSettled, NarrowEnoughOrWithinTheNoiseAtEveryMeasuredSize) {
  Crossover c;
  c.lo = 1 << 20;
  c.hi = 5 << 18;  // 1.25x
  const MeasuredTimes a{{1 << 20, 5 << 18, 4 << 20}, {100, 120, 300}};
  const MeasuredTimes b{{1 << 20, 5 << 18, 4 << 20}, {110, 110, 250}};
  EXPECT_TRUE(bracket_settled(c, a, b, 0.005));
  c.hi = 4 << 20;
  EXPECT_FALSE(bracket_settled(c, a, b, 0.005));
  EXPECT_FALSE(bracket_settled(c, a, b, 0.15));  // 300 against 250 at 4M
  EXPECT_TRUE(bracket_settled(c, a, b, 0.25));
}

}  // namespace
}  // namespace nccltune
