// The confirmation's sizes off the grid, judged: a served range whose choice loses to
// NCCL's own between two grid points is cut back to where it held, and what is cut off goes to
// NCCL's own choice (no range covers it). Measured at the grid alone, the same range is
// confirmed: the off-grid sizes are what find the loss.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "profile/size_ranges.h"
#include "tune_profile/plugin_confirmation.h"

namespace nccltune {
namespace {

// One point of the rounds: its size, env + plugin's busbw over the defaults', and whether the
// plugin served it.
struct OffGridPoint {
  std::uint64_t bytes;
  double ratio;
  int served = 1;
};

PluginRounds all_reduce_rounds(const std::vector<OffGridPoint>& points) {
  PluginRounds r;
  r.rounds = 3;
  for (const OffGridPoint& p : points) {
    r.ops.push_back({"all_reduce"});
    r.sizes.push_back(p.bytes);
    r.defaults.push_back(1);
    r.with_plugin.push_back(p.ratio);
    r.served.push_back(p.served);
  }
  return r;
}

constexpr std::uint64_t K = 1024, M = 1024 * 1024;

// The off-grid crossover model's profile as the grid alone built it: Tree/LL128 from 16K to 4M - 1, built from the grid's 16K..1M where it won;
// NCCL's own Ring/LL128 overtakes it near 1.1M.
Profile issue_50_profile() {
  Profile p;
  CollectiveProfile& ar = p.collectives["all_reduce"];
  ar.per_size = {{0, 16 * K - 1, "Tree", "LL", 0}, {16 * K, 4 * M - 1, "Tree", "LL128", 0}};
  ar.results.sizes = {4 * K, 16 * K, 64 * K, 256 * K, 1 * M, 4 * M};
  return p;
}

// The grid's points: Tree/LL128 wins at each (4M is no range's: the plugin serves nothing there).
std::vector<OffGridPoint> issue_50_grid() {
  return {{4 * K, 1.2}, {16 * K, 1.3}, {64 * K, 1.5}, {256 * K, 1.6}, {1 * M, 1.055}, {4 * M, 1.0, 0}};
}

// The grid's points and the confirmation's: 24K and 768K hold, 1.5M and above lose, more the
// farther past the crossover, as the model has it (tune-off-grid-crossover.yaml).
std::vector<OffGridPoint> issue_50_points() {
  return {{4 * K, 1.2},     {16 * K, 1.3},  {24 * K, 1.35},  {64 * K, 1.5},     {256 * K, 1.6},
          {768 * K, 1.3},   {1 * M, 1.055}, {3 * M / 2, 0.84}, {2 * M, 0.75},   {3 * M, 0.61},
          {4 * M - 32, 0.55}, {4 * M, 1.0, 0}};
}

TEST(PluginCuts, TheGridAloneConfirmsTheRangeThatLosesBetweenItsPoints) {
  EXPECT_TRUE(withheld_ranges(issue_50_profile(), all_reduce_rounds(issue_50_grid()), 0.02).empty());
}

TEST(PluginCuts, ARangeLosingPastTheCrossoverIsCutBackToWhereItHeld) {
  Profile p = issue_50_profile();
  const auto cut = withheld_ranges(p, all_reduce_rounds(issue_50_points()), 0.02);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].range, (SizeChoice{16 * K, 4 * M - 1, "Tree", "LL128", 0}));
  ASSERT_TRUE(cut[0].kept.has_value());
  // The losing size next to what is kept, not the slowest (3M, 0.61x): it says where the cut is.
  EXPECT_EQ(cut[0].bytes, 3 * M / 2);
  EXPECT_DOUBLE_EQ(cut[0].ratio, 0.84);
  // The switch goes at the geometric midpoint of 1M (held) and 1.5M (lost): 1284239.
  EXPECT_EQ(*cut[0].kept, (SizeChoice{16 * K, 1284238, "Tree", "LL128", 0}));
  EXPECT_EQ(describe(cut[0]), "all_reduce 16384..4194303 Tree/LL128 cut back to 16384..1284238 (0.84x at 1572864)");

  cut_ranges(p, cut);
  const std::vector<SizeChoice>& per_size = p.collectives["all_reduce"].per_size;
  ASSERT_EQ(per_size.size(), 2u);
  EXPECT_EQ(per_size[0], (SizeChoice{0, 16 * K - 1, "Tree", "LL", 0}));  // untouched
  // A 3 MiB job runs NCCL's own choice; a 1 MiB job keeps the gain.
  EXPECT_EQ(choice_for_size(per_size, 3 * M), nullptr);
  EXPECT_EQ(choice_for_size(per_size, 3 * M / 2), nullptr);
  ASSERT_NE(choice_for_size(per_size, 1 * M), nullptr);
  EXPECT_EQ(choice_for_size(per_size, 1 * M)->proto, "LL128");
}

// A range that loses near its lower edge (its choice took over too early) keeps its upper part,
// from the midpoint between the last size that lost and the first that held.
TEST(PluginCuts, ARangeLosingNearItsLowerEdgeKeepsItsUpperPart) {
  Profile p = issue_50_profile();
  const auto cut = withheld_ranges(
      p, all_reduce_rounds({{16 * K, 0.9}, {24 * K, 0.95}, {32 * K, 1.1}, {1 * M, 1.2}, {3 * M, 1.1}}), 0.02);
  ASSERT_EQ(cut.size(), 1u);
  ASSERT_TRUE(cut[0].kept.has_value());
  EXPECT_EQ(cut[0].bytes, 24 * K);  // next to the kept part
  EXPECT_EQ(cut[0].kept->min_bytes, 28378u);  // ceil(sqrt(24K x 32K))
  EXPECT_EQ(cut[0].kept->max_bytes, 4 * M - 1);
  cut_ranges(p, cut);
  EXPECT_EQ(choice_for_size(p.collectives["all_reduce"].per_size, 20 * K), nullptr);
}

// Cut from both ends, the range keeps the middle, and names the worse of the two sizes that cut it.
TEST(PluginCuts, ARangeLosingNearBothEdgesKeepsTheMiddle) {
  const auto cut = withheld_ranges(
      issue_50_profile(),
      all_reduce_rounds({{24 * K, 0.9}, {64 * K, 1.1}, {1 * M, 1.2}, {3 * M, 0.8}, {4 * M - 32, 0.5}}), 0.02);
  ASSERT_EQ(cut.size(), 1u);
  ASSERT_TRUE(cut[0].kept.has_value());
  EXPECT_EQ(cut[0].kept->min_bytes, 40133u);  // ceil(sqrt(24K x 64K))
  EXPECT_EQ(cut[0].kept->max_bytes, 1816186u);  // ceil(sqrt(1M x 3M)) - 1
  EXPECT_EQ(cut[0].bytes, 3 * M);
  EXPECT_DOUBLE_EQ(cut[0].ratio, 0.8);
}

// Everything from a losing size to the nearer edge goes, what held there too: a range keeps one
// stretch, on the far side of the loss.
TEST(PluginCuts, WhatHeldBetweenALossAndTheNearerEdgeGoesWithIt) {
  Profile p;
  p.collectives["all_reduce"].per_size = {{1 * K, 1 * M - 1, "Tree", "LL128", 0}};
  // 16K is nearer 1K (16x) than 1M (64x): the range keeps what lies above it.
  const auto cut = withheld_ranges(p, all_reduce_rounds({{1 * K, 1.2}, {16 * K, 0.9}, {256 * K, 1.1}}), 0.02);
  ASSERT_EQ(cut.size(), 1u);
  ASSERT_TRUE(cut[0].kept.has_value());
  EXPECT_EQ(*cut[0].kept, (SizeChoice{64 * K, 1 * M - 1, "Tree", "LL128", 0}));
}

// A range with no size left where it held is withheld whole, named by its slowest size, as before.
TEST(PluginCuts, ARangeThatHeldNowhereOnItsSideIsDropped) {
  Profile p = issue_50_profile();
  // 1.5M is nearer the upper edge, 24K the lower: nothing between them held.
  const auto cut = withheld_ranges(
      p, all_reduce_rounds({{16 * K, 1.2}, {24 * K, 0.9}, {3 * M / 2, 0.8}, {3 * M, 0.6}}), 0.02);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_FALSE(cut[0].kept.has_value());
  EXPECT_EQ(cut[0].bytes, 3 * M);
  EXPECT_EQ(describe(cut[0]), "all_reduce 16384..4194303 Tree/LL128 (0.60x at 3145728)");
  cut_ranges(p, cut);
  ASSERT_EQ(p.collectives["all_reduce"].per_size.size(), 1u);
  EXPECT_EQ(p.collectives["all_reduce"].per_size[0].proto, "LL");
}

// A size off the grid where the plugin did not serve cuts the range as a loss does.
TEST(PluginCuts, AnOffGridSizeNotServedCutsTheRange) {
  PluginRounds r = all_reduce_rounds(
      {{16 * K, 1.3}, {64 * K, 1.5}, {1 * M, 1.1}, {3 * M / 2, 1.2, 0}, {3 * M, 1.2, 0}});
  r.declined_why = "no channel count for this size";
  const auto cut = withheld_ranges(issue_50_profile(), r, 0.02);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_FALSE(cut[0].served);
  EXPECT_EQ(cut[0].why, r.declined_why);
  EXPECT_EQ(describe(cut[0]),
            "all_reduce 16384..4194303 Tree/LL128 cut back to 16384..1284238 (not served at 1572864)");
}

// The record is the grid's: results.with_plugin beside results.sizes, the off-grid points left
// out; the verdict stays confirmed, and the note and the verdict say what was cut.
TEST(PluginCuts, TheRecordHoldsTheGridsPointsAndNamesTheCut) {
  Profile p = issue_50_profile();
  const PluginRounds r = all_reduce_rounds(issue_50_points());
  const auto cut = withheld_ranges(p, r, 0.02);
  cut_ranges(p, cut);
  record_with_plugin(p, r, Objective::balanced, 0.02, cut);
  const CollectiveProfile& ar = p.collectives["all_reduce"];
  EXPECT_EQ(ar.results.with_plugin, (std::vector<double>{1.2, 1.3, 1.5, 1.6, 1.055, 1.0}));
  EXPECT_EQ(ar.plugin.status, PluginStatus::confirmed);
  const std::string named = "all_reduce 16384..4194303 Tree/LL128 cut back to 16384..1284238 (0.84x at 1572864)";
  EXPECT_NE(ar.plugin.why.find(named), std::string::npos) << ar.plugin.why;
  EXPECT_NE(p.provenance.plugin_confirmation.find(named), std::string::npos) << p.provenance.plugin_confirmation;
}

}  // namespace
}  // namespace nccltune
