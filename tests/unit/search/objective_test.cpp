#include "search/objective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace nccltune;

namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

}  // namespace

TEST(Objective, Names) {
  for (Objective objective : {Objective::balanced, Objective::bandwidth, Objective::latency})
    EXPECT_EQ(*parse_objective(to_string(objective)), objective);
  Result<Objective> bad = parse_objective("fastest");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "unknown objective 'fastest' (balanced, bandwidth, latency)");
  EXPECT_FALSE(parse_objective("Balanced").ok());
}

TEST(Objective, BalancedIsTheGeometricMeanOfSpeedups) {
  const std::vector<std::size_t> sizes{8, 1 * KiB, 1 * MiB, 1024 * MiB};
  const std::vector<double> baseline{1, 10, 100, 300};
  const Score same = score(Objective::balanced, sizes, baseline, baseline);
  EXPECT_DOUBLE_EQ(same.value, 1.0);
  EXPECT_DOUBLE_EQ(same.worst_ratio, 1.0);
  EXPECT_TRUE(same.acceptable);

  // x2 at one size, x0.5 at another: the geometric mean is 1, and the loss is not acceptable.
  const Score mixed = score(Objective::balanced, sizes, baseline, {2, 5, 100, 300});
  EXPECT_NEAR(mixed.value, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(mixed.worst_ratio, 0.5);
  EXPECT_FALSE(mixed.acceptable);

  const Score better = score(Objective::balanced, sizes, baseline, {1, 10, 121, 363});
  EXPECT_NEAR(better.value, 1.1, 1e-12);  // (1 * 1 * 1.21 * 1.21)^(1/4)
  EXPECT_TRUE(better.acceptable);
}

TEST(Objective, ToleranceBoundsTheWorstSize) {
  const std::vector<std::size_t> sizes{8, 1 * MiB};
  const std::vector<double> baseline{100, 100};
  EXPECT_TRUE(score(Objective::balanced, sizes, baseline, {98, 150}).acceptable);  // exactly 2% worse
  EXPECT_FALSE(score(Objective::balanced, sizes, baseline, {97.9, 150}).acceptable);
  EXPECT_TRUE(score(Objective::balanced, sizes, baseline, {97.9, 150}, 0.05).acceptable);
  EXPECT_FALSE(score(Objective::balanced, sizes, baseline, {99.9, 150}, 0.0).acceptable);
  EXPECT_TRUE(score(Objective::balanced, sizes, baseline, {100, 150}, 0.0).acceptable);
}

TEST(Objective, BandwidthLooksAtLargeSizesOnly) {
  const std::vector<std::size_t> sizes{8, 64 * KiB, 1 * MiB, 256 * MiB};
  const std::vector<double> baseline{1, 10, 100, 300};
  const Score s = score(Objective::bandwidth, sizes, baseline, {0.5, 5, 120, 360});
  EXPECT_NEAR(s.value, 1.2, 1e-12);
  EXPECT_NEAR(s.worst_ratio, 1.2, 1e-12);
  EXPECT_TRUE(s.acceptable);  // small sizes lost half, but they are not the objective's
  const Score worse = score(Objective::bandwidth, sizes, baseline, {2, 20, 97, 360});
  EXPECT_FALSE(worse.acceptable);
  EXPECT_NEAR(worse.worst_ratio, 0.97, 1e-12);
}

TEST(Objective, LatencyLooksAtSmallSizesOnly) {
  const std::vector<std::size_t> sizes{8, 64 * KiB, 64 * KiB + 1, 256 * MiB};
  const std::vector<double> baseline{1, 10, 100, 300};
  const Score s = score(Objective::latency, sizes, baseline, {1.5, 15, 50, 150});
  EXPECT_NEAR(s.value, 1.5, 1e-12);
  EXPECT_TRUE(s.acceptable);
  EXPECT_FALSE(score(Objective::latency, sizes, baseline, {0.9, 15, 300, 900}).acceptable);
}

TEST(Objective, NoQualifyingSizeMeansAllSizes) {
  const std::vector<std::size_t> small{8, 1 * KiB};
  const std::vector<double> baseline{1, 10};
  const Score bandwidth = score(Objective::bandwidth, small, baseline, {4, 10});
  EXPECT_NEAR(bandwidth.value, 2.0, 1e-12);
  const std::vector<std::size_t> large{2 * MiB, 4 * MiB};
  const Score latency = score(Objective::latency, large, baseline, {1, 40});
  EXPECT_NEAR(latency.value, 2.0, 1e-12);
}

TEST(Objective, ZeroBaselineIsSkippedAndZeroCandidateIsFatal) {
  const std::vector<std::size_t> sizes{8, 1 * KiB, 1 * MiB};
  const Score skipped = score(Objective::balanced, sizes, {0, -1, 100}, {5, 5, 110});
  EXPECT_NEAR(skipped.value, std::cbrt(1.1), 1e-12);  // ratios 1, 1, 1.1
  EXPECT_DOUBLE_EQ(skipped.worst_ratio, 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NEAR(score(Objective::balanced, sizes, {nan, 10, 100}, {1, 10, 100}).value, 1.0, 1e-12);

  const Score dead = score(Objective::balanced, sizes, {1, 10, 100}, {1, 0, 200});
  EXPECT_EQ(dead.value, 0.0);
  EXPECT_EQ(dead.worst_ratio, 0.0);
  EXPECT_FALSE(dead.acceptable);
  EXPECT_FALSE(score(Objective::balanced, sizes, {1, 10, 100}, {1, nan, 200}).acceptable);
}

TEST(Objective, MismatchedOrEmptyInputs) {
  const Score mismatched = score(Objective::balanced, {8, 16}, {1, 1}, {1});
  EXPECT_EQ(mismatched.value, 0.0);
  EXPECT_FALSE(mismatched.acceptable);
  const Score empty = score(Objective::balanced, {}, {}, {});
  EXPECT_EQ(empty.value, 1.0);
  EXPECT_EQ(empty.worst_ratio, 1.0);
  EXPECT_TRUE(empty.acceptable);
}
