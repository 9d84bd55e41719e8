// What the confirmation of the tuner plugin makes of its rounds: a per_size range the plugin did
// not serve at a measured size, or whose choice is slower than the defaults beyond the tolerance
// there, is cut back to where it held, or leaves the profile when it held nowhere (once, by its
// first unserved or slowest size), guards and collectives without per_size are left alone, and the
// rounds become results.with_plugin (only where the plugin served, at the grid's sizes), its score,
// each collective's verdict and the note that names what was withheld or cut.
#include "tune_profile/plugin_confirmation.h"

#include <gtest/gtest.h>

namespace nccltune {
namespace {

Profile two_ranges() {
  Profile p;
  CollectiveProfile& ar = p.collectives["all_reduce"];
  ar.per_size = {{0, 65535, "Tree", "LL", 0}, {65536, 1048576, "Ring", "LL128", 0}};
  ar.results.sizes = {1024, 65536, 1048576};
  CollectiveProfile& guard = p.collectives["alltoall"];
  guard.guard = true;
  guard.results.sizes = {1024, 65536, 1048576};
  return p;
}

// all_reduce's points served by the plugin (`ar_served`), the guard's not (it has no range).
PluginRounds rounds(std::vector<double> ar_defaults, std::vector<double> ar_plugin,
                    std::vector<int> ar_served = {1, 1, 1}) {
  PluginRounds r;
  r.rounds = 3;
  for (const char* op : {"all_reduce", "alltoall"})
    for (std::uint64_t bytes : {1024u, 65536u, 1048576u}) {
      r.ops.push_back({op});
      r.sizes.push_back(bytes);
    }
  r.served = ar_served;
  r.served.insert(r.served.end(), {0, 0, 0});
  r.defaults = ar_defaults;
  r.with_plugin = ar_plugin;
  for (int i = 0; i < 3; ++i) {  // the guard: the same either way
    r.defaults.push_back(10);
    r.with_plugin.push_back(10);
  }
  return r;
}

TEST(PluginConfirmation, ARangeSlowerThanTheDefaultsBeyondTheToleranceLoses) {
  const Profile p = two_ranges();
  // 64 KiB and 1 MiB both in the second range: it loses once, by its slowest size (0.8x).
  const auto losing = withheld_ranges(p, rounds({1, 10, 100}, {1.01, 9, 80}), 0.02);
  ASSERT_EQ(losing.size(), 1u);
  EXPECT_EQ(losing[0].op, ShapedOp{"all_reduce"});
  EXPECT_EQ(losing[0].range.algo, "Ring");
  EXPECT_EQ(losing[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(losing[0].ratio, 0.8);
  EXPECT_TRUE(losing[0].served);
  EXPECT_EQ(describe(losing[0]), "all_reduce 65536..1048576 Ring/LL128 (0.80x at 1048576)");
}

// A rail's range says its shape as a profile section does.
TEST(PluginConfirmation, AShapesRangeNamesItsShapeAndPlainCollective) {
  const WithheldRange rail{
      {"all_reduce", CommRole::rail}, {0, 1048576, "Ring", "LL128", 0}, 1048576, 0.88, true, {}, {}};
  EXPECT_EQ(describe(rail), "rail: all_reduce 0..1048576 Ring/LL128 (0.88x at 1048576)");
}

// A section's ranges are judged by their own communicator's points, and leave that section only.
TEST(PluginConfirmation, ASectionsRangeIsJudgedOnItsOwnPointsAndLeavesItsSection) {
  Profile p;
  p.collectives["all_reduce"].per_size = {{0, 1048576, "Tree", "LL128", 0}};
  CommunicatorSection rail{2, 1, CommRole::rail, {}};
  rail.collectives["all_reduce"].per_size = {{0, 1048576, "Ring", "LL128", 0}};
  p.shapes.push_back(rail);
  PluginRounds r;
  r.rounds = 1;
  r.ops = {{"all_reduce"}, {"all_reduce", CommRole::rail}};
  r.sizes = {1048576, 1048576};
  r.served = {1, 1};
  r.defaults = {100, 10};
  r.with_plugin = {120, 8};  // the world gains, the rail loses
  const auto losing = withheld_ranges(p, r, 0.02);
  ASSERT_EQ(losing.size(), 1u);
  EXPECT_EQ(losing[0].op, (ShapedOp{"all_reduce", CommRole::rail}));
  EXPECT_EQ(describe(losing[0]), "rail: all_reduce 0..1048576 Ring/LL128 (0.80x at 1048576)");
  drop_ranges(p, losing);
  EXPECT_TRUE(p.shapes[0].collectives["all_reduce"].per_size.empty());
  EXPECT_EQ(p.collectives["all_reduce"].per_size.size(), 1u);
}

TEST(PluginConfirmation, WithinTheToleranceNothingLoses) {
  EXPECT_TRUE(withheld_ranges(two_ranges(), rounds({1, 10, 100}, {0.99, 9.9, 98.5}), 0.02).empty());
}

TEST(PluginConfirmation, DroppingLeavesTheOtherRanges) {
  Profile p = two_ranges();
  drop_ranges(p, withheld_ranges(p, rounds({1, 10, 100}, {0.5, 10, 100}), 0.02));
  ASSERT_EQ(p.collectives["all_reduce"].per_size.size(), 1u);
  EXPECT_EQ(p.collectives["all_reduce"].per_size[0].algo, "Ring");
}

TEST(PluginConfirmation, RecordsTheServedCollectivesCurveAndNamesWhatWasWithheld) {
  Profile p = two_ranges();
  const PluginRounds r = rounds({1, 10, 100}, {1.1, 11, 110});
  const std::vector<WithheldRange> withheld{
      {{"all_reduce"}, {0, 65535, "Tree", "LL", 0}, 1024, 0.5, true, {}, {}}};
  drop_ranges(p, withheld);
  record_with_plugin(p, r, Objective::balanced, 0.02, withheld);
  const CollectiveProfile& ar = p.collectives["all_reduce"];
  EXPECT_EQ(ar.results.with_plugin, (std::vector<double>{1.1, 11, 110}));
  EXPECT_NEAR(ar.results.with_plugin_speedup_geomean, 1.1, 1e-9);
  EXPECT_EQ(ar.plugin.status, PluginStatus::confirmed);
  EXPECT_NE(ar.plugin.why.find("all_reduce 0..65535 Tree/LL (0.50x at 1024)"), std::string::npos)
      << ar.plugin.why;
  // The guard has no range the plugin could serve: no curve, no verdict.
  EXPECT_TRUE(p.collectives["alltoall"].results.with_plugin.empty());
  EXPECT_EQ(p.collectives["alltoall"].plugin.status, PluginStatus::none);
  EXPECT_NE(p.provenance.plugin_confirmation.find("+10.0%"), std::string::npos)
      << p.provenance.plugin_confirmation;
  EXPECT_NE(p.provenance.plugin_confirmation.find("all_reduce 0..65535 Tree/LL (0.50x at 1024)"),
            std::string::npos)
      << p.provenance.plugin_confirmation;
}

// A size the plugin did not serve ran NCCL's own choice: however fast, it confirms nothing, and
// its range is withheld there with the plugin's words: from that size to the nearer edge (here
// the lower: 64K is the range's first size), kept above where it held (1M).
TEST(PluginConfirmation, ARangeThePluginDidNotServeIsWithheldHoweverFastItRan) {
  Profile p = two_ranges();
  PluginRounds r = rounds({1, 10, 100}, {1, 30, 300}, {1, 0, 1});
  r.declined_why = "Ring/LL128 is not available to this communicator; NCCL's choice stands";
  const auto withheld = withheld_ranges(p, r, 0.02);
  ASSERT_EQ(withheld.size(), 1u);
  EXPECT_FALSE(withheld[0].served);
  EXPECT_EQ(withheld[0].bytes, 65536u);
  EXPECT_EQ(withheld[0].why, r.declined_why);
  EXPECT_EQ(describe(withheld[0]),
            "all_reduce 65536..1048576 Ring/LL128 cut back to 262144..1048576 (not served at 65536)");
  // Where the plugin served nothing of a range, nothing of it is kept.
  r = rounds({1, 10, 100}, {1, 30, 300}, {1, 0, 0});
  const auto unserved = withheld_ranges(p, r, 0.02);
  ASSERT_EQ(unserved.size(), 1u);
  EXPECT_FALSE(unserved[0].kept.has_value());
  EXPECT_EQ(describe(unserved[0]), "all_reduce 65536..1048576 Ring/LL128 (not served at 65536)");
}

// NCCL makes no call for an empty collective, so the plugin is never asked there: a 0-byte point
// withholds nothing.
TEST(PluginConfirmation, AnEmptyCollectiveClaimsNothing) {
  Profile p = two_ranges();
  PluginRounds r = rounds({1, 10, 100}, {1, 10, 100}, {0, 1, 1});
  r.sizes[0] = 0;  // all_gather of 8 bytes on 4 ranks
  EXPECT_TRUE(withheld_ranges(p, r, 0.02).empty());
}

// The plugin declined the communicator (a profile for 8 GPUs per node, 2 ranks per node here):
// every range is withheld, and the profile says why instead of showing the env's numbers again
// as a with-plugin column.
TEST(PluginConfirmation, NothingServedMeansNoWithPluginColumnAndANotServedVerdict) {
  Profile p = two_ranges();
  PluginRounds r = rounds({1, 10, 100}, {1.2, 12, 120}, {0, 0, 0});
  r.declined_why = "not using /p/2n.yaml: tuned for 8 GPUs per node, this communicator has 2 nodes, 4 ranks";
  const auto withheld = withheld_ranges(p, r, 0.02);
  EXPECT_EQ(withheld.size(), 2u);
  drop_ranges(p, withheld);
  record_with_plugin(p, r, Objective::balanced, 0.02, withheld);
  const CollectiveProfile& ar = p.collectives["all_reduce"];
  EXPECT_TRUE(ar.per_size.empty());
  EXPECT_TRUE(ar.results.with_plugin.empty());
  EXPECT_EQ(ar.plugin.status, PluginStatus::not_served);
  EXPECT_NE(ar.plugin.why.find("tuned for 8 GPUs per node"), std::string::npos) << ar.plugin.why;
  EXPECT_EQ(p.provenance.plugin_confirmation.rfind("not served: not using /p/2n.yaml", 0), 0u)
      << p.provenance.plugin_confirmation;
  EXPECT_EQ(p.provenance.plugin_confirmation.find("confirmed"), std::string::npos);
}

}  // namespace
}  // namespace nccltune
