// Where two candidates trade places between measured sizes (search/crossover.h): each one's
// measurements around the gap fitted to NCCL's cost model (time = latency + bytes / bandwidth),
// the switch put where the fits cross inside the bracket of adjacent sizes whose winners differ,
// and the cases where the fits cannot say (parallel, crossing elsewhere, no bandwidth) flagged
// with the measured boundary. Inputs that are no measurements are refused.
#include "search/crossover.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace nccltune {
namespace {

// time_us of a pair whose cost is exactly latency + bytes / bandwidth (GB/s), at `sizes`.
MeasuredTimes line_times(const std::vector<std::uint64_t>& sizes, double latency_us, double gbps) {
  MeasuredTimes times;
  times.sizes = sizes;
  for (std::uint64_t bytes : sizes) times.time_us.push_back(latency_us + static_cast<double>(bytes) / (gbps * 1e3));
  return times;
}

// Every fourth power of two from 16K to 64M: the final grid's middle and top.
std::vector<std::uint64_t> grid_16k_to_64m() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = 16 << 10; bytes <= 64u << 20; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

// A low-latency, low-bandwidth pair and a high-latency, high-bandwidth one: the off-grid crossover model's Tree/LL128
// and Ring/LL128 on 2 nodes.
constexpr double kTreeLatency = 5, kTreeGbps = 16, kRingLatency = 50, kRingGbps = 42.5;

// Where those two lines cross, from their parameters alone.
double exact_crossing() {
  return (kRingLatency - kTreeLatency) / (1 / (kTreeGbps * 1e3) - 1 / (kRingGbps * 1e3));
}

TEST(CostFit, TwoPointsGiveTheLineThroughThem) {
  const Result<CostFit> fit = fit_cost(line_times({1 << 20, 4 << 20}, 12, 40));
  ASSERT_TRUE(fit.ok()) << fit.error();
  EXPECT_NEAR(fit->latency_us, 12, 1e-9);
  EXPECT_NEAR(fit->gbps(), 40, 1e-9);
  EXPECT_NEAR(fit->time_us(3 << 20), 12 + (3 << 20) / 40e3, 1e-9);
  EXPECT_EQ(fit->sizes, (std::vector<std::uint64_t>{1 << 20, 4 << 20}));
}

TEST(CostFit, PointsOnOneLineGiveThatLineWhateverTheirScale) {
  // From 16K (latency-bound) to 64M (bandwidth-bound): relative residuals weigh them alike, and
  // points on one line are fitted exactly either way.
  const Result<CostFit> fit = fit_cost(line_times(grid_16k_to_64m(), 7.5, 90));
  ASSERT_TRUE(fit.ok()) << fit.error();
  EXPECT_NEAR(fit->latency_us, 7.5, 1e-6);
  EXPECT_NEAR(fit->gbps(), 90, 1e-6);
}

TEST(CostFit, ResidualsAreRelativeSoALargePointsErrorDoesNotSwampTheLatency) {
  // +2% on the largest of three points (64M, ~30 us): a fit of absolute residuals moves the
  // latency by a whole microsecond (9.0 instead of 10); relative residuals keep the small sizes'
  // say and the latency within 0.1 us.
  MeasuredTimes times = line_times({256 << 10, 4 << 20, 64u << 20}, 10, 45);
  times.time_us.back() *= 1.02;
  const Result<CostFit> fit = fit_cost(times);
  ASSERT_TRUE(fit.ok()) << fit.error();
  EXPECT_NEAR(fit->latency_us, 10, 0.2);
  EXPECT_NEAR(fit->gbps(), 45, 45 * 0.02);
}

TEST(CostFit, AFitWhoseTimeDoesNotGrowHasNoBandwidth) {
  const Result<CostFit> fit = fit_cost({{1024, 4096}, {30, 20}});
  ASSERT_TRUE(fit.ok()) << fit.error();
  EXPECT_LT(fit->us_per_byte, 0);
  EXPECT_EQ(fit->gbps(), 0);
}

TEST(CostFit, WhatIsNoMeasurementIsRefused) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(fit_cost({{1024}, {5}}).ok());                          // one point: no line
  EXPECT_FALSE(fit_cost({{1024, 4096}, {5}}).ok());                    // sizes without times
  EXPECT_FALSE(fit_cost({{4096, 1024}, {5, 6}}).ok());                 // descending
  EXPECT_FALSE(fit_cost({{1024, 1024}, {5, 6}}).ok());                 // one size twice
  EXPECT_FALSE(fit_cost({{1024, 4096}, {5, inf}}).ok());               // pair mode's unavailable
  EXPECT_FALSE(fit_cost({{1024, 4096}, {5, std::nan("")}}).ok());
  EXPECT_FALSE(fit_cost({{1024, 4096}, {0, 6}}).ok());
  EXPECT_FALSE(fit_cost({{1024, 4096}, {-1, 6}}).ok());
  EXPECT_NE(fit_cost({{1024, 4096}, {5, inf}}).error().find("4096"), std::string::npos);
}

TEST(Crossover, TheSwitchIsWhereTheFittedCostsCrossInsideTheBracket) {
  const std::vector<std::uint64_t> sizes = grid_16k_to_64m();
  const MeasuredTimes tree = line_times(sizes, kTreeLatency, kTreeGbps);
  const MeasuredTimes ring = line_times(sizes, kRingLatency, kRingGbps);
  const auto found = locate_crossovers(tree, ring);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  const Crossover& c = found->front();
  // Tree wins at 1M, Ring at 4M: the grid's boundary would be 4M, the costs cross near 1.1M.
  EXPECT_EQ(c.lo, 1u << 20);
  EXPECT_EQ(c.hi, 4u << 20);
  EXPECT_EQ(c.below, 0u);
  EXPECT_EQ(c.fit, CrossoverFit::crossing);
  EXPECT_TRUE(c.fitted());
  EXPECT_NEAR(static_cast<double>(c.bytes), std::ceil(exact_crossing()), 1);
  EXPECT_GT(c.bytes, c.lo);
  EXPECT_LE(c.bytes, c.hi);
  // The evidence: each fit on the bracket and one neighbour each side, NCCL's model recovered.
  const std::vector<std::uint64_t> around{256 << 10, 1 << 20, 4 << 20, 16 << 20};
  EXPECT_EQ(c.first.sizes, around);
  EXPECT_EQ(c.second.sizes, around);
  EXPECT_NEAR(c.first.latency_us, kTreeLatency, 1e-6);
  EXPECT_NEAR(c.first.gbps(), kTreeGbps, 1e-6);
  EXPECT_NEAR(c.second.latency_us, kRingLatency, 1e-6);
  EXPECT_NEAR(c.second.gbps(), kRingGbps, 1e-6);
}

TEST(Crossover, TheOrderOfTheCandidatesChangesOnlyWhichIsBelow) {
  const std::vector<std::uint64_t> sizes = grid_16k_to_64m();
  const MeasuredTimes tree = line_times(sizes, kTreeLatency, kTreeGbps);
  const MeasuredTimes ring = line_times(sizes, kRingLatency, kRingGbps);
  const auto forward = locate_crossovers(tree, ring);
  const auto backward = locate_crossovers(ring, tree);
  ASSERT_TRUE(forward.ok() && backward.ok());
  ASSERT_EQ(forward->size(), 1u);
  ASSERT_EQ(backward->size(), 1u);
  EXPECT_EQ(backward->front().below, 1u);
  EXPECT_EQ(backward->front().bytes, forward->front().bytes);
  EXPECT_DOUBLE_EQ(backward->front().first.latency_us, forward->front().second.latency_us);
  EXPECT_DOUBLE_EQ(backward->front().second.gbps(), forward->front().first.gbps());
}

TEST(Crossover, NoNeighboursFitTheBracketsTwoPointsAlone) {
  const std::vector<std::uint64_t> sizes = grid_16k_to_64m();
  const auto found = locate_crossovers(line_times(sizes, kTreeLatency, kTreeGbps),
                                       line_times(sizes, kRingLatency, kRingGbps), 0);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().first.sizes, (std::vector<std::uint64_t>{1 << 20, 4 << 20}));
  EXPECT_NEAR(static_cast<double>(found->front().bytes), std::ceil(exact_crossing()), 1);
}

TEST(Crossover, ABracketAtTheEndOfTheCurvesHasTheNeighboursThereAre) {
  // Two sizes only: the window is the bracket.
  const auto found = locate_crossovers(line_times({1 << 20, 4 << 20}, kTreeLatency, kTreeGbps),
                                       line_times({1 << 20, 4 << 20}, kRingLatency, kRingGbps));
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().first.sizes.size(), 2u);
  EXPECT_TRUE(found->front().fitted());
}

TEST(Crossover, OneCandidateFasterEverywhereHasNoCrossover) {
  const std::vector<std::uint64_t> sizes = grid_16k_to_64m();
  const auto found = locate_crossovers(line_times(sizes, 5, 50), line_times(sizes, 6, 40));
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_TRUE(found->empty());
}

TEST(Crossover, EveryChangeOfWinnerIsABracket) {
  // Measured, not lines: a wins at 1K and 2K, b at 4K and 8K, a again at 16K.
  const MeasuredTimes a{{1024, 2048, 4096, 8192, 16384}, {10, 12, 20, 30, 40}};
  const MeasuredTimes b{{1024, 2048, 4096, 8192, 16384}, {11, 13, 16, 25, 50}};
  const auto found = locate_crossovers(a, b);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].lo, 2048u);
  EXPECT_EQ((*found)[0].hi, 4096u);
  EXPECT_EQ((*found)[0].below, 0u);
  EXPECT_EQ((*found)[1].lo, 8192u);
  EXPECT_EQ((*found)[1].hi, 16384u);
  EXPECT_EQ((*found)[1].below, 1u);
  for (const Crossover& c : *found) {
    EXPECT_GT(c.bytes, c.lo);
    EXPECT_LE(c.bytes, c.hi);
  }
}

TEST(Crossover, ASizeWhereBothTookTheSameTimeLiesInsideTheBracket) {
  const MeasuredTimes a{{1024, 2048, 4096}, {10, 15, 30}};
  const MeasuredTimes b{{1024, 2048, 4096}, {12, 15, 25}};
  const auto found = locate_crossovers(a, b, 0);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().lo, 1024u);
  EXPECT_EQ(found->front().hi, 4096u);
  // The window is lo..hi: the tie inside it is fitted too.
  EXPECT_EQ(found->front().first.sizes.size(), 3u);
}

TEST(Crossover, FitsThatCrossBeyondTheBracketKeepTheMeasuredBoundary) {
  // a is an exact line; b beats it at 3000 and 4000 by a hair, but over its four points b's line
  // is flatter than between the bracket's two, and the fits cross near 3190: not inside
  // (2000, 3000], so the switch stays at the measured 3000, flagged.
  const MeasuredTimes a{{1000, 2000, 3000, 4000}, {20, 30, 40, 50}};
  const MeasuredTimes b{{1000, 2000, 3000, 4000}, {24, 31, 39.9, 49.9}};
  const auto found = locate_crossovers(a, b);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  const Crossover& c = found->front();
  EXPECT_EQ(c.lo, 2000u);
  EXPECT_EQ(c.hi, 3000u);
  EXPECT_EQ(c.fit, CrossoverFit::outside_bracket);
  EXPECT_FALSE(c.fitted());
  EXPECT_EQ(c.bytes, 3000u);
  // The fits are kept as evidence all the same.
  EXPECT_NEAR(c.first.latency_us, 10, 1e-9);
  EXPECT_GT(c.second.gbps(), c.first.gbps());
  // With the bracket's two points alone, the lines must cross inside it.
  const auto alone = locate_crossovers(a, b, 0);
  ASSERT_TRUE(alone.ok() && alone->size() == 1u);
  EXPECT_EQ(alone->front().fit, CrossoverFit::crossing);
  EXPECT_LT(alone->front().bytes, 3000u);
}

TEST(Crossover, OneLineShiftedNeverChangesTheWinner) {
  // Equal bandwidths, b 1 us dearer: parallel costs, a faster everywhere, nothing to place.
  const auto found = locate_crossovers(line_times({1000, 2000, 3000, 4000}, 10, 0.1),
                                       line_times({1000, 2000, 3000, 4000}, 11, 0.1));
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_TRUE(found->empty());
}

CostFit fit_line(double latency_us, double us_per_byte) {
  CostFit fit;
  fit.latency_us = latency_us;
  fit.us_per_byte = us_per_byte;
  return fit;
}

TEST(FittedSwitch, ParallelFitsKeepTheMeasuredBoundary) {
  // Measured winners can differ across a bracket while the fits over more points come out with
  // one bandwidth (noise at the bracket): the costs never cross.
  const FittedSwitch at = fitted_switch(fit_line(10, 0.01), fit_line(20, 0.01), 1000, 4000);
  EXPECT_EQ(at.fit, CrossoverFit::parallel);
  EXPECT_EQ(at.bytes, 4000u);
  EXPECT_EQ(fitted_switch(fit_line(10, 0.01), fit_line(20, 0.01 * (1 + 1e-12)), 1000, 4000).fit, CrossoverFit::parallel);
}

TEST(FittedSwitch, FitsThatCrossOutsideOrTheOtherWayRoundKeepTheMeasuredBoundary) {
  // below: 8 + x / 2; above: 1508 + x / 4 (binary fractions: exact), crossing at 6000.
  const CostFit below = fit_line(8, 0.5), above = fit_line(1508, 0.25);
  EXPECT_EQ(fitted_switch(below, above, 2000, 8000).fit, CrossoverFit::crossing);
  EXPECT_EQ(fitted_switch(below, above, 2000, 8000).bytes, 6000u);
  EXPECT_EQ(fitted_switch(below, above, 2000, 6000).bytes, 6000u);  // at hi: inside
  EXPECT_EQ(fitted_switch(below, above, 2000, 6000).fit, CrossoverFit::crossing);
  using Bracket = std::pair<std::uint64_t, std::uint64_t>;
  for (const auto& [lo, hi] : {Bracket{2000, 4000}, Bracket{6000, 8000}, Bracket{7000, 8000}}) {
    const FittedSwitch at = fitted_switch(below, above, lo, hi);
    EXPECT_EQ(at.fit, CrossoverFit::outside_bracket) << lo << ".." << hi;
    EXPECT_EQ(at.bytes, hi);
  }
  // The one that won at lo with the higher bandwidth: by the fits it would win above the crossing.
  EXPECT_EQ(fitted_switch(above, below, 2000, 8000).fit, CrossoverFit::outside_bracket);
}

TEST(FittedSwitch, TheCrossingIsRoundedUpToAWholeByteInsideTheBracket) {
  // Crossing at 1000.5: the first whole byte where `above` is not dearer is 1001.
  const FittedSwitch at = fitted_switch(fit_line(0, 0.5), fit_line(250.125, 0.25), 1000, 2000);
  EXPECT_EQ(at.fit, CrossoverFit::crossing);
  EXPECT_EQ(at.bytes, 1001u);
}

TEST(FittedSwitch, AFitWithoutBandwidthIsFlagged) {
  EXPECT_EQ(fitted_switch(fit_line(10, 0), fit_line(20, 0.01), 1000, 4000).fit, CrossoverFit::no_bandwidth);
  EXPECT_EQ(fitted_switch(fit_line(10, 0.01), fit_line(20, -0.001), 1000, 4000).fit, CrossoverFit::no_bandwidth);
  EXPECT_EQ(fitted_switch(fit_line(10, 0.01), fit_line(20, -0.001), 1000, 4000).bytes, 4000u);
}

TEST(Crossover, AFitWithoutBandwidthIsFlaggedAndKeepsTheMeasuredBoundary) {
  // a gets faster with size (a broken measurement, or another regime): its fit has no bandwidth.
  const MeasuredTimes a{{1024, 4096}, {30, 20}};
  const MeasuredTimes b{{1024, 4096}, {10, 40}};
  const auto found = locate_crossovers(a, b);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().below, 1u);
  EXPECT_EQ(found->front().fit, CrossoverFit::no_bandwidth);
  EXPECT_EQ(found->front().bytes, 4096u);
}

TEST(Crossover, WhatIsNoMeasurementIsRefused) {
  const double inf = std::numeric_limits<double>::infinity();
  const MeasuredTimes good{{1024, 4096}, {10, 40}};
  EXPECT_FALSE(locate_crossovers({{1024}, {10}}, {{1024}, {12}}).ok());     // fewer than 2 points
  EXPECT_FALSE(locate_crossovers(good, {{1024, 4096}, {12, inf}}).ok());   // unavailable
  EXPECT_FALSE(locate_crossovers({{1024, 4096}, {0, 40}}, good).ok());     // no time
  EXPECT_FALSE(locate_crossovers(good, {{1024, 8192}, {12, 30}}).ok());    // other sizes
  EXPECT_FALSE(locate_crossovers(good, {{1024, 4096, 8192}, {12, 30, 60}}).ok());
  const auto refused = locate_crossovers(good, {{1024, 4096}, {12, -3}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("second"), std::string::npos) << refused.error();
}

TEST(Crossover, TheFlagsHaveNames) {
  EXPECT_EQ(to_string(CrossoverFit::crossing), "crossing");
  EXPECT_EQ(to_string(CrossoverFit::parallel), "parallel");
  EXPECT_EQ(to_string(CrossoverFit::outside_bracket), "outside-bracket");
  EXPECT_EQ(to_string(CrossoverFit::no_bandwidth), "no-bandwidth");
}

}  // namespace
}  // namespace nccltune
