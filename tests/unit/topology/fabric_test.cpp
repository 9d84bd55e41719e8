// NVML's fabric health mask and the fabric's identifiers, as nvml.h defines them.
#include "topology/fabric.h"

#include <gtest/gtest.h>

using namespace nccltune;

TEST(FabricHealth, EachFieldIsTwoBitsAtItsNvmlShift) {
  // nvml.h: DEGRADED_BW at 0, ROUTE_RECOVERY at 2, ROUTE_UNHEALTHY at 4, ACCESS_TIMEOUT_RECOVERY
  // at 6, each NOT_SUPPORTED 0 / TRUE 1 / FALSE 2; INCORRECT_CONFIGURATION 4 bits at 8.
  const FabricHealth healthy = decode_fabric_health(0xaa);
  EXPECT_EQ(healthy.degraded_bandwidth, FabricCondition::absent);
  EXPECT_EQ(healthy.route_recovery, FabricCondition::absent);
  EXPECT_EQ(healthy.route_unhealthy, FabricCondition::absent);
  EXPECT_EQ(healthy.access_timeout_recovery, FabricCondition::absent);
  EXPECT_EQ(healthy.incorrect_configuration, 0);

  EXPECT_EQ(decode_fabric_health(0xa9).degraded_bandwidth, FabricCondition::present);
  EXPECT_EQ(decode_fabric_health(0xa6).route_recovery, FabricCondition::present);
  EXPECT_EQ(decode_fabric_health(0x9a).route_unhealthy, FabricCondition::present);
  EXPECT_EQ(decode_fabric_health(0x6a).access_timeout_recovery, FabricCondition::present);
  EXPECT_EQ(decode_fabric_health(0x4aa).incorrect_configuration, 4);
  EXPECT_EQ(incorrect_configuration_name(4), "no_partition");
  EXPECT_EQ(incorrect_configuration_name(1), "none");
  EXPECT_EQ(incorrect_configuration_name(12), "code 12");

  const FabricHealth unsupported = decode_fabric_health(0);
  EXPECT_EQ(unsupported, FabricHealth{});
}

TEST(FabricHealth, EncodeIsDecodesInverse) {
  for (std::uint32_t mask : {0x0u, 0xaau, 0x1aau, 0xa9u, 0x555u, 0x7ffu})
    EXPECT_EQ(encode_fabric_health(decode_fabric_health(mask)), mask) << health_mask_text(mask);
}

TEST(FabricHealth, ProblemsNameEachFieldThatReportsOne) {
  GpuFabric fabric;
  fabric.state = FabricState::completed;
  fabric.health_mask = 0xaa;
  EXPECT_TRUE(fabric_health_problems(fabric).empty()) << "0xaa: every condition FALSE, healthy";
  fabric.health_mask = 0x1aa;
  EXPECT_TRUE(fabric_health_problems(fabric).empty()) << "configuration NONE";
  fabric.health_mask = 0x599;  // bandwidth degraded, route unhealthy, too few NVLinks
  const auto problems = fabric_health_problems(fabric);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].field, "degraded_bandwidth");
  EXPECT_EQ(problems[1].field, "route_unhealthy");
  EXPECT_EQ(problems[2].field, "incorrect_configuration");
  EXPECT_EQ(problems[2].meaning, "incorrect configuration: insufficient_nvlinks");
}

TEST(FabricHealth, AnUnhealthySummaryWithoutAFieldIsAProblemOfItsOwn) {
  GpuFabric fabric;
  fabric.health_mask = 0x1aa;
  fabric.summary = FabricSummary::unhealthy;
  const auto problems = fabric_health_problems(fabric);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].field, "summary");
  fabric.health_mask = 0x1a9;  // the field says why: the summary adds nothing
  fabric.summary = FabricSummary::limited_capacity;
  ASSERT_EQ(fabric_health_problems(fabric).size(), 1u);
  EXPECT_EQ(fabric_health_problems(fabric)[0].field, "degraded_bandwidth");
}

TEST(FabricIds, UuidsAndMasksReadAndPrintAsNvidiaSmiAndNcclDo) {
  const unsigned char bytes[16] = {0x5b, 0x3f, 0x1c, 0x2e, 0x8a, 0x4d, 0x4e, 0x6b,
                                   0x9f, 0x0a, 0x7c, 0x2d, 0x1e, 0x3b, 0x4a, 0x56};
  EXPECT_EQ(uuid_text(bytes), "5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56");
  EXPECT_EQ(normalize_uuid("5B3F1C2E8A4D4E6B9F0A7C2D1E3B4A56"), "5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56");
  EXPECT_EQ(normalize_uuid("5b3f1c2e-8a4d"), std::nullopt);
  EXPECT_EQ(normalize_uuid("5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56-00"), std::nullopt);
  EXPECT_EQ(normalize_uuid("zb3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56"), std::nullopt);
  EXPECT_TRUE(uuid_is_zero("00000000-0000-0000-0000-000000000000"));
  EXPECT_FALSE(uuid_is_zero("5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56"));
  EXPECT_EQ(health_mask_text(0xaa), "0xaa");
  EXPECT_EQ(health_mask_text(0), "0x0");
  EXPECT_EQ(parse_health_mask("0x1AA"), 0x1aau);
  EXPECT_EQ(parse_health_mask("170"), 0xaau);
  EXPECT_EQ(parse_health_mask("0x"), std::nullopt);
  EXPECT_EQ(parse_health_mask("0x100000000"), std::nullopt);
  EXPECT_EQ(parse_health_mask("-1"), std::nullopt);
}

TEST(FabricIds, OnlyACompletedSuccessfulRegistrationWithAClusterIsMultiNode) {
  GpuFabric fabric;
  fabric.state = FabricState::completed;
  fabric.status = "Success";
  fabric.cluster_uuid = "5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56";
  EXPECT_TRUE(fabric.in_multi_node_domain());
  GpuFabric zero = fabric;
  zero.cluster_uuid = "00000000-0000-0000-0000-000000000000";  // an NVSwitch node (HGX)
  EXPECT_FALSE(zero.in_multi_node_domain());
  GpuFabric failed = fabric;
  failed.status = "Insufficient Resources";
  EXPECT_FALSE(failed.in_multi_node_domain());
  GpuFabric registering = fabric;
  registering.state = FabricState::in_progress;
  EXPECT_FALSE(registering.in_multi_node_domain());
}
