// What the confirmation of the tuner plugin makes of its rounds: a per_size range whose choice is
// slower than the defaults beyond the tolerance at a measured size leaves the profile (once, by
// its slowest size), guards and collectives without per_size are left alone, and the rounds
// become results.with_plugin, its score and the note that names what was dropped.
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

PluginRounds rounds(std::vector<double> ar_defaults, std::vector<double> ar_plugin) {
  PluginRounds r;
  r.rounds = 3;
  for (const char* op : {"all_reduce", "alltoall"})
    for (std::uint64_t bytes : {1024u, 65536u, 1048576u}) {
      r.ops.push_back(op);
      r.sizes.push_back(bytes);
    }
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
  const auto losing = losing_ranges(p, rounds({1, 10, 100}, {1.01, 9, 80}), 0.02);
  ASSERT_EQ(losing.size(), 1u);
  EXPECT_EQ(losing[0].op, "all_reduce");
  EXPECT_EQ(losing[0].range.algo, "Ring");
  EXPECT_EQ(losing[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(losing[0].ratio, 0.8);
  EXPECT_EQ(describe(losing[0]), "all_reduce 65536..1048576 Ring/LL128 (0.80x at 1048576)");
}

TEST(PluginConfirmation, WithinTheToleranceNothingLoses) {
  EXPECT_TRUE(losing_ranges(two_ranges(), rounds({1, 10, 100}, {0.99, 9.9, 98.5}), 0.02).empty());
}

TEST(PluginConfirmation, DroppingLeavesTheOtherRanges) {
  Profile p = two_ranges();
  drop_ranges(p, losing_ranges(p, rounds({1, 10, 100}, {0.5, 10, 100}), 0.02));
  ASSERT_EQ(p.collectives["all_reduce"].per_size.size(), 1u);
  EXPECT_EQ(p.collectives["all_reduce"].per_size[0].algo, "Ring");
}

TEST(PluginConfirmation, RecordsEachCollectivesCurveAndNamesWhatWasDropped) {
  Profile p = two_ranges();
  const PluginRounds r = rounds({1, 10, 100}, {1.1, 11, 110});
  const std::vector<LosingRange> dropped{{"all_reduce", {0, 65535, "Tree", "LL", 0}, 1024, 0.5}};
  record_with_plugin(p, r, Objective::balanced, 0.02, dropped);
  EXPECT_EQ(p.collectives["all_reduce"].results.with_plugin, (std::vector<double>{1.1, 11, 110}));
  EXPECT_NEAR(p.collectives["all_reduce"].results.with_plugin_speedup_geomean, 1.1, 1e-9);
  EXPECT_EQ(p.collectives["alltoall"].results.with_plugin, (std::vector<double>{10, 10, 10}));
  EXPECT_NE(p.provenance.plugin_confirmation.find("+10.0%"), std::string::npos)
      << p.provenance.plugin_confirmation;
  EXPECT_NE(p.provenance.plugin_confirmation.find("all_reduce 0..65535 Tree/LL (0.50x at 1024)"),
            std::string::npos)
      << p.provenance.plugin_confirmation;
}

}  // namespace
}  // namespace nccltune
