#include "topology/sources/sysfs_source.h"

#include <gtest/gtest.h>

#include "topology/sources/ibverbs_source.h"

using namespace nccltune;

TEST(Sysfs, PcieSpeedsMapToGenerations) {
  EXPECT_EQ(pcie_gen_from_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcie_gen_from_speed("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(pcie_gen_from_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcie_gen_from_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcie_gen_from_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_gen_from_speed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(pcie_gen_from_speed("8 GT/s"), 3);  // older kernels
  EXPECT_FALSE(pcie_gen_from_speed("Unknown"));
  EXPECT_FALSE(pcie_gen_from_speed(""));
}

TEST(Sysfs, InfinibandPortFiles) {
  EXPECT_EQ(ib_rate_gbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_EQ(ib_rate_gbps("56 Gb/sec (4X FDR)"), 56);
  EXPECT_FALSE(ib_rate_gbps("garbage"));
  EXPECT_EQ(ib_port_state("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(ib_port_state("1: DOWN"), "DOWN");
}

TEST(Ibverbs, RateFromSpeedAndWidthCodes) {
  EXPECT_EQ(ib_rate_from_verbs(128, 2), 400);  // NDR 4x
  EXPECT_EQ(ib_rate_from_verbs(64, 2), 200);   // HDR 4x
  EXPECT_EQ(ib_rate_from_verbs(32, 2), 100);   // EDR 4x
  EXPECT_EQ(ib_rate_from_verbs(64, 16), 100);  // HDR 2x
  EXPECT_EQ(ib_rate_from_verbs(3, 2), 0);
}
