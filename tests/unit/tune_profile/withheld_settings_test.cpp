// The settings a tune over several shapes withholds from env, and where they lost.
#include "tune_profile/withheld_settings.h"

#include <gtest/gtest.h>

namespace nccltune {
namespace {

// all_reduce at 1M on the world and on a rail, at these busbw.
TrialMeasurement world_and_rail(double world, double rail) {
  TrialMeasurement m;
  m.ops = {"all_reduce", "all_reduce"};
  m.comms = {"world", "rail"};
  m.sizes = {1 << 20, 1 << 20};
  m.busbw = {world, rail};
  return m;
}

const NcclNodeLayout kTwoNodesOfFour{2, 4, 2, false};

TEST(WithheldSettings, ASettingThatWinsOnOneShapeAndLosesOnAnotherIsWithheldWithWhere) {
  const std::vector<TrialMeasurement> defaults{world_and_rail(100, 10), world_and_rail(100, 10)};
  const std::vector<ScreenedEnv> screened{
      {{{"NCCL_BUFFSIZE", "8388608"}}, world_and_rail(130, 8)},      // +30% world, -20% rail
      {{{"NCCL_NET_GDR_LEVEL", "SYS"}}, world_and_rail(120, 12)},    // helps both: not withheld
      {{{"NCCL_IB_QPS_PER_CONNECTION", "4"}}, world_and_rail(100.5, 9)}};  // gains nowhere
  const auto withheld = withheld_settings(defaults, screened, {}, kTwoNodesOfFour, 0.01, 0.02);
  ASSERT_EQ(withheld.size(), 1u);
  EXPECT_EQ(withheld[0].env, (Env{{"NCCL_BUFFSIZE", "8388608"}}));
  EXPECT_EQ(withheld[0].why, "rail (2 nodes x 1): all_reduce -20% at 1M; +30% on world");
}

TEST(WithheldSettings, WhatShipsIsNeverWithheld) {
  const std::vector<ScreenedEnv> screened{{{{"NCCL_BUFFSIZE", "8388608"}}, world_and_rail(130, 8)}};
  EXPECT_TRUE(withheld_settings({world_and_rail(100, 10)}, screened, {{"NCCL_BUFFSIZE", "8388608"}},
                                kTwoNodesOfFour, 0.01, 0.02)
                  .empty());
}

}  // namespace
}  // namespace nccltune
