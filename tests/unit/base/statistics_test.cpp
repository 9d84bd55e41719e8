// The statistics every decision shares (base/statistics.h).
#include "base/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace nccltune;

TEST(Statistics, MedianOfAnOddCountIsTheMiddleValue) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({5}), 5);
  EXPECT_DOUBLE_EQ(median({10, 1, 7, 7, 2}), 7);
}

TEST(Statistics, MedianOfAnEvenCountIsTheMeanOfTheTwoMiddleValues) {
  EXPECT_DOUBLE_EQ(median({4, 1}), 2.5);
  EXPECT_DOUBLE_EQ(median({1, 2, 3, 10}), 2.5);
}

TEST(Statistics, MedianOfNothingIsZero) { EXPECT_DOUBLE_EQ(median({}), 0); }

TEST(Statistics, AnInfiniteRunCountsAsTheSlowest) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(median({inf, 2, 1}), 2);
  EXPECT_TRUE(std::isinf(median({inf, inf, 1})));
}

TEST(Statistics, MedianCurveTakesEachPointOverTheCurvesThatReachIt) {
  const std::vector<double> curve = median_curve({{1, 10, 5}, {3, 30}, {2, 20}});
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_DOUBLE_EQ(curve[0], 2);
  EXPECT_DOUBLE_EQ(curve[1], 20);
  EXPECT_DOUBLE_EQ(curve[2], 5);
  EXPECT_TRUE(median_curve({}).empty());
}

TEST(Statistics, GeometricMean) {
  EXPECT_DOUBLE_EQ(geometric_mean({}), 1);
  EXPECT_NEAR(geometric_mean({2, 8}), 4, 1e-12);
  EXPECT_NEAR(geometric_mean({1.1, 1.1, 1.1}), 1.1, 1e-12);
}

TEST(Statistics, GeometricMeanIsZeroWhenARatioIsNotAboveZero) {
  EXPECT_DOUBLE_EQ(geometric_mean({2, 0, 8}), 0);
  EXPECT_DOUBLE_EQ(geometric_mean({2, -1}), 0);
  EXPECT_DOUBLE_EQ(geometric_mean({std::nan("")}), 0);
}

TEST(Statistics, NoiseIsTheFarthestRepeatAndAtLeastTheFloor) {
  EXPECT_DOUBLE_EQ(noise_of_repeats({}), kMinNoise);
  EXPECT_DOUBLE_EQ(noise_of_repeats({1, 1.001, 0.999}), kMinNoise);
  EXPECT_NEAR(noise_of_repeats({1, 1.02, 0.97}), 0.03, 1e-12);
  EXPECT_NEAR(noise_of_repeats({1.04, 1}), 0.04, 1e-12);
}
