#include "search/fitted_loss.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace nccltune;

namespace fitted_loss_test {

constexpr std::uint64_t MiB = 1u << 20;

// busbw (up to the collective's constant factor: bytes / time) of latency + bytes / bandwidth.
std::vector<double> busbw_of(const std::vector<std::uint64_t>& sizes, double latency_us, double gbps,
                             const std::vector<double>& noise = {}) {
  std::vector<double> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double time_us = latency_us + static_cast<double>(sizes[i]) / (gbps * 1e3);
    out.push_back(static_cast<double>(sizes[i]) / time_us * (i < noise.size() ? noise[i] : 1.0));
  }
  return out;
}

const std::vector<std::uint64_t> kGrid{64 * 1024, 256 * 1024, MiB, 4 * MiB, 16 * MiB};

}  // namespace fitted_loss_test

using namespace fitted_loss_test;

// The sizes a gap is compared at: the confirmation's half-octave steps, the middle of a narrow one.
TEST(FittedLoss, SizesInsideAGapAreHalfOctaveSteps) {
  EXPECT_EQ(sizes_inside(MiB, 4 * MiB), (std::vector<std::uint64_t>{3 * MiB / 2, 2 * MiB, 3 * MiB}));
  EXPECT_EQ(sizes_inside(MiB, 5 * MiB / 4), (std::vector<std::uint64_t>{1172343}));  // sqrt(1M x 1.25M)
  EXPECT_TRUE(sizes_inside(4, 5).empty());
}

// The same costs: no loss anywhere.
TEST(FittedLoss, TheSameCostsLoseNothing) {
  const auto base = busbw_of(kGrid, 50, 80);
  const auto loss = worst_fitted_between(kGrid, base, base);
  ASSERT_TRUE(loss.has_value());
  EXPECT_NEAR(loss->ratio, 1.0, 1e-9);
}

// Every measured end of a gap within 1.5% of the defaults, but the points around agree that the
// candidate runs 10% slower there: one measurement each side that the noise favoured does not
// hide it.
TEST(FittedLoss, ATrendTheNeighboursAgreeOnIsALoss) {
  const auto base = busbw_of(kGrid, 50, 80);
  // Ten per cent slower everywhere, but 1M and 4M measured 8.5% fast.
  const auto cand = busbw_of(kGrid, 55, 72, {1, 1, 1.085, 1.085, 1});
  EXPECT_GT(cand[2] / base[2], 0.98);
  EXPECT_GT(cand[3] / base[3], 0.98);
  const auto loss = worst_fitted_between(kGrid, base, cand);
  ASSERT_TRUE(loss.has_value());
  EXPECT_LT(loss->ratio, 0.97);
  EXPECT_GT(loss->bytes, loss->lo);
  EXPECT_LT(loss->bytes, loss->hi);
}

// Lower latency, lower bandwidth: wins small, loses large; the worst is inside the last gap, near
// its larger end, where the lines part most.
TEST(FittedLoss, ASizeDependentKnobLosesInsideTheGapWhereItsCostOvertakes) {
  const auto base = busbw_of(kGrid, 50, 80);
  const auto cand = busbw_of(kGrid, 20, 50);
  const auto loss = worst_fitted_between(kGrid, base, cand);
  ASSERT_TRUE(loss.has_value());
  EXPECT_EQ(loss->lo, 4 * MiB);
  EXPECT_EQ(loss->hi, 16 * MiB);
  EXPECT_EQ(loss->bytes, 12 * MiB);
  const double base_us = 50 + 12.0 * MiB / 80e3, cand_us = 20 + 12.0 * MiB / 50e3;
  EXPECT_NEAR(loss->ratio, base_us / cand_us, 1e-6);
}

// Points that say nothing: a failed size (busbw 0) skips the gaps it is fitted in; two points of
// a collective fit; one point has no gap.
TEST(FittedLoss, GapsWithoutAFitAreSkipped) {
  auto base = busbw_of(kGrid, 50, 80);
  auto cand = busbw_of(kGrid, 50, 80);
  cand[4] = 0;
  const auto loss = worst_fitted_between(kGrid, base, cand);
  ASSERT_TRUE(loss.has_value());
  EXPECT_LT(loss->hi, 16 * MiB) << "the gaps fitted with the failed point are skipped";
  EXPECT_FALSE(worst_fitted_between({MiB}, {1.0}, {1.0}).has_value());
  EXPECT_TRUE(worst_fitted_between({MiB, 4 * MiB}, {10.0, 20.0}, {10.0, 20.0}).has_value());
}

// The confirmation's sizes between grid points: 1.5x and 3x of each for a 4x grid, 1.5x for 2x.
TEST(FittedLoss, BetweenGridSizesAreOneAndAHalfAndThreeTimesEachGridSize) {
  EXPECT_EQ(between_grid_sizes({256 * 1024, MiB, 4 * MiB}),
            (std::vector<std::uint64_t>{384 * 1024, 768 * 1024, 3 * MiB / 2, 3 * MiB}));
  EXPECT_EQ(between_grid_sizes({MiB, 2 * MiB}), (std::vector<std::uint64_t>{3 * MiB / 2}));
  EXPECT_TRUE(between_grid_sizes({8}).empty());
  EXPECT_TRUE(between_grid_sizes({1, 2}).empty()) << "nothing strictly between";
}

// A point is the grid's when the size that made it is: sizes rounded down to whole elements per
// rank (all_gather on 40 ranks: 1.5M is 1572800 B) still come from their own request.
TEST(FittedLoss, RoundedPointsAreTracedToTheirRequestedSize) {
  const std::vector<std::uint64_t> grid{8, MiB, 4 * MiB};
  const std::vector<std::uint64_t> requested{8, MiB, 3 * MiB / 2, 3 * MiB, 4 * MiB};
  EXPECT_EQ(from_grid({0, 1048480, 1572800, 3145600, 4194240}, requested, grid),
            (std::vector<bool>{true, true, false, false, true}));
}
