#include "collectives/bus_bandwidth.h"

#include <gtest/gtest.h>

using namespace nccltune;

TEST(BusBandwidth, FactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_reduce", 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_reduce", 16), 30.0 / 16);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_gather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("reduce_scatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("alltoall", 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("broadcast", 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("reduce", 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("gossip", 4), 0.0);
}

TEST(BusBandwidth, AlgorithmBandwidthIsBytesOverTime) {
  // 1 GiB in 4478.8 us, a row of a real 16-rank nccl-tests log: algbw 239.74 GB/s.
  EXPECT_NEAR(algorithm_bandwidth_gbps(1073741824, 4478.8), 239.74, 0.005);
  EXPECT_EQ(algorithm_bandwidth_gbps(1024, 0), 0);
}
