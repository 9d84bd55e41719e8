// bench --baseline-nccl-lib's comparison of two NCCL libraries: verdicts against the noise and
// --max-regression, per-op summaries, the profile's recommendation and the JSON report reads.
#include <gtest/gtest.h>

#include <cmath>

#include "upgrade/upgrade_comparison.h"
#include "upgrade/upgrade_json.h"

using namespace nccltune;

namespace {

// OLD at 10 GB/s everywhere; NEW's busbw per point is old x `factors`. Three identical rounds.
UpgradeInput upgrade_input(const std::vector<std::uint64_t>& sizes, const std::vector<double>& factors) {
  UpgradeInput in;
  in.old_nccl = {"/opt/nccl-2.28/libnccl.so.2", "2.28.9"};
  in.new_nccl = {"/opt/nccl-2.29/libnccl.so.2", "2.29.1"};
  std::vector<double> old_curve, new_curve;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    in.ops.push_back("all_reduce");
    in.sizes.push_back(sizes[i]);
    old_curve.push_back(10);
    new_curve.push_back(10 * factors[i]);
  }
  in.old_rounds = {old_curve, old_curve, old_curve};
  in.new_rounds = {new_curve, new_curve, new_curve};
  return in;
}

const std::vector<std::uint64_t> kUpgradeSizes = {8192, 65536, 524288, 4194304, 33554432};

}  // namespace

TEST(UpgradeComparison, SizesBeyondTheLimitAndTheNoiseRegress) {
  const UpgradeComparison c = compare_upgrade(upgrade_input(kUpgradeSizes, {0.88, 0.88, 0.99, 1.001, 1.06}));
  ASSERT_EQ(c.rows.size(), 5u);
  EXPECT_EQ(c.rounds, 3);
  EXPECT_DOUBLE_EQ(c.noise, kUpgradeNoiseFloor);  // identical rounds: the floor
  EXPECT_EQ(c.rows[0].verdict, UpgradeVerdict::regression);
  EXPECT_TRUE(c.rows[0].beyond_limit);
  EXPECT_TRUE(c.rows[1].beyond_limit);
  EXPECT_EQ(c.rows[2].verdict, UpgradeVerdict::regression);  // 1% slower: beyond the noise, within 3%
  EXPECT_FALSE(c.rows[2].beyond_limit);
  EXPECT_EQ(c.rows[3].verdict, UpgradeVerdict::same);
  EXPECT_EQ(c.rows[4].verdict, UpgradeVerdict::improvement);
  EXPECT_NEAR(c.rows[4].ratio, 1.06, 1e-12);
  EXPECT_TRUE(c.regressed());
  ASSERT_EQ(c.ops.size(), 1u);
  EXPECT_EQ(c.ops[0].worst_bytes, 8192u);
  EXPECT_NEAR(c.ops[0].worst_ratio, 0.88, 1e-12);
  EXPECT_NEAR(c.ops[0].geomean, std::pow(0.88 * 0.88 * 0.99 * 1.001 * 1.06, 0.2), 1e-12);
  const std::string table = render_upgrade_table(c);
  EXPECT_NE(table.find("# Regressions beyond 3% and the noise: all_reduce 8K (-12.0%), all_reduce 64K (-12.0%)\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("# Faster on NEW: all_reduce 32M (+6.0%)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("OLD 2.28.9 against NEW 2.29.1"), std::string::npos) << table;
}

TEST(UpgradeComparison, AWiderLimitPassesWhatIsStillARegression) {
  UpgradeInput in = upgrade_input(kUpgradeSizes, {0.88, 0.88, 1, 1, 1.06});
  in.max_regression_percent = 15;
  const UpgradeComparison c = compare_upgrade(in);
  EXPECT_EQ(c.rows[0].verdict, UpgradeVerdict::regression);
  EXPECT_FALSE(c.regressed());
  EXPECT_NE(render_upgrade_table(c).find("# No size regresses beyond 15% and the noise\n"), std::string::npos);
}

TEST(UpgradeComparison, ASizeWhoseRoundsSpreadWiderIsJudgedAgainstItsSpread) {
  UpgradeInput in = upgrade_input({8192, 65536}, {0.9, 0.8});
  in.old_rounds = {{10, 10}, {12.5, 10}, {10, 10}};  // 8K: one round 25% off its median
  const UpgradeComparison c = compare_upgrade(in);
  EXPECT_NEAR(c.rows[0].noise, 0.25, 1e-12);
  EXPECT_EQ(c.rows[0].verdict, UpgradeVerdict::same);
  EXPECT_FALSE(c.rows[0].beyond_limit);
  // The rounds' geometric means spread too: the tune's noise floor, for every size.
  EXPECT_NEAR(c.noise, std::sqrt(1.25) - 1, 1e-12);
  EXPECT_EQ(c.rows[1].verdict, UpgradeVerdict::regression);
}

TEST(UpgradeComparison, AProfileThatStillGainsOnNewExtendsItsVersionRule) {
  UpgradeInput in = upgrade_input(kUpgradeSizes, {1, 1, 1, 1, 1});
  in.profile_path = "h100.yaml";
  in.profile_nccl = "2.28";
  in.old_profile_rounds = {{11, 11, 11, 11, 11}};
  in.new_profile_rounds = {{10.6, 10.6, 10.6, 10.6, 10.6}};
  const UpgradeComparison c = compare_upgrade(in);
  ASSERT_TRUE(c.profile);
  EXPECT_TRUE(c.profile->helps_on_new);
  EXPECT_NEAR(c.profile->old_gain, 1.1, 1e-12);
  EXPECT_EQ(c.profile->recommendation, "extend env.nccl_compatible to 2.29: the 2.28 profile gains +6.0% on 2.29");
}

TEST(UpgradeComparison, AProfileThatCostsOnNewSaysRetuneAndWhere) {
  UpgradeInput in = upgrade_input(kUpgradeSizes, {1, 1, 1, 1, 1});
  in.profile_nccl = "2.28";
  in.old_profile_rounds = {{11, 11, 11, 11, 11}};
  in.new_profile_rounds = {{10.5, 9.1, 9.5, 10.5, 10.5}};
  const UpgradeComparison c = compare_upgrade(in);
  ASSERT_TRUE(c.profile);
  EXPECT_FALSE(c.profile->helps_on_new);
  EXPECT_EQ(c.profile->recommendation, "retune for 2.29: the profile costs 9% at 64K-512K");
  in.new_profile_rounds = {{10, 10, 10, 10, 10}};
  EXPECT_EQ(compare_upgrade(in).profile->recommendation,
            "retune for 2.29: the 2.28 profile gains nothing on 2.29 beyond the noise");
}

TEST(UpgradeComparison, TheJsonHoldsBothSidesAndReadsBack) {
  UpgradeInput in = upgrade_input(kUpgradeSizes, {0.88, 0.88, 1, 1, 1.06});
  in.profile_path = "h100.yaml";
  in.old_profile_rounds = {{11, 11, 11, 11, 11}};
  in.new_profile_rounds = {{10.6, 10.6, 10.6, 10.6, 10.6}};
  const UpgradeComparison c = compare_upgrade(in);
  const auto json = upgrade_to_json(c);
  EXPECT_EQ(json["old"]["nccl_version"], "2.28.9");
  EXPECT_EQ(json["new"]["nccl_version"], "2.29.1");
  EXPECT_EQ(json["rows"][0]["old_busbw"], 10.0);
  EXPECT_NEAR(json["rows"][0]["new_busbw"].get<double>(), 8.8, 1e-12);
  EXPECT_EQ(json["rows"][0]["verdict"], "regression");
  EXPECT_EQ(json["regressed"], true);
  const Result<UpgradeComparison> back = parse_upgrade_json(json.dump(), "upgrade.json");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(render_upgrade_table(*back), render_upgrade_table(c));
}

TEST(UpgradeComparison, BadJsonNamesTheFileAndTheField) {
  auto json = upgrade_to_json(compare_upgrade(upgrade_input({8192}, {0.9})));
  json["rows"][0]["new_busbw"] = "fast";
  EXPECT_EQ(parse_upgrade_json(json.dump(), "u.json").error(), "u.json: rows[0].new_busbw: not a number");
  json["rows"][0]["new_busbw"] = 9;
  json["rows"][0]["verdict"] = "worse";
  EXPECT_EQ(parse_upgrade_json(json.dump(), "u.json").error(),
            "u.json: rows[0].verdict: not regression, improvement or same within noise");
  json.erase("old");
  EXPECT_EQ(parse_upgrade_json(json.dump(), "u.json").error(), "u.json: old: missing");
  EXPECT_EQ(parse_upgrade_json("{\"schema\": \"nccltune/bench/v1\"}", "u.json").error(),
            "u.json: schema: expected \"nccltune/bench-upgrade/v1\"");
  EXPECT_EQ(parse_upgrade_json("[1,", "u.json").error(), "u.json: not valid JSON");
}

TEST(UpgradeComparison, NonFiniteNumbersAreRefused) {
  const std::string text = upgrade_to_json(compare_upgrade(upgrade_input({8192}, {0.9}))).dump();
  const std::string key = "\"new_busbw\":";
  for (const std::string literal : {"1e999", "NaN", "Infinity"}) {
    std::string changed = text;
    changed.insert(changed.find(key) + key.size(), literal + ",\"x\":");
    const Result<UpgradeComparison> back = parse_upgrade_json(changed, "u.json");
    ASSERT_FALSE(back.ok()) << literal;
    EXPECT_EQ(back.error(), "u.json: not valid JSON") << literal;
  }
}
