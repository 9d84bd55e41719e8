// `nccltune diff`: what changed between two profiles. A golden diff of the demo profile against
// the same shape after an NCCL upgrade (regenerate with NCCLTUNE_UPDATE_GOLDEN=1 and review the
// diff), and each kind of change on its own.
#include "report/profile_diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "golden.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::expect_golden;
using nccltune::test_support::read_report_profile;

namespace {

const std::string kDemo = "store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml";

}  // namespace

TEST(ProfileDiff, NcclUpgradeGolden) {
  const Profile a = read_report_profile(kDemo), b = read_report_profile("upgraded-2n.yaml");
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_FALSE(d.identical());
  expect_golden("diff-nccl-upgrade.txt", render_profile_diff(d, a, "a/2n.yaml", b, "b/2n.yaml"));
}

TEST(ProfileDiff, CollectivesOnOneSideOnlyAreNamed) {
  // A v1 profile (all_reduce alone) against the demo's v2 one with four collectives.
  const Profile a = read_report_profile(kDemo), b = read_report_profile("collectives/2n.yaml");
  const ProfileDiff d = diff_profiles(a, b);
  ASSERT_EQ(d.collectives.size(), 4u);
  // In profile order: A's, then what only B has.
  EXPECT_EQ(d.collectives[0].name, "all_reduce");
  EXPECT_TRUE(d.collectives[0].in_a && d.collectives[0].in_b);
  EXPECT_EQ(d.collectives[1].name, "all_gather");
  EXPECT_FALSE(d.collectives[1].in_a);
  const std::string text = render_profile_diff(d, a, "v1/2n.yaml", b, "v2/2n.yaml");
  EXPECT_NE(text.find("\nall_gather: measured in B only\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nalltoall: measured in B only\n"), std::string::npos) << text;
  EXPECT_NE(text.find("busbw GB/s of all_reduce at the sizes both measured"), std::string::npos) << text;
  EXPECT_NE(text.find("speedup of all_reduce over the defaults"), std::string::npos) << text;
  EXPECT_TRUE(diff_profiles(b, b).identical());
}

TEST(ProfileDiff, NcclUpgradeFindsEachKindOfChange) {
  const ProfileDiff d = diff_profiles(read_report_profile(kDemo), read_report_profile("upgraded-2n.yaml"));
  auto shape_field = [&](const std::string& field) {
    for (const FieldChange& c : d.shape)
      if (c.field == field) return c.before + " -> " + c.after;
    return std::string();
  };
  EXPECT_EQ(shape_field("nccl_version"), "2.28.9 -> 2.29.2");
  EXPECT_EQ(shape_field("key"),
            "h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28 -> h100-80gb-hbm3.2gpu.nics-unknown.nccl2.29");
  EXPECT_EQ(shape_field("gpus_per_node"), "");
  ASSERT_EQ(d.env.size(), 3u);  // NCCL_BUFFSIZE added, NCCL_MIN_NCHANNELS removed, NCCL_NET_GDR_LEVEL changed
  EXPECT_EQ(d.env[0].field, "NCCL_BUFFSIZE");
  EXPECT_EQ(d.env[0].before, "");
  EXPECT_EQ(d.env[1].field, "NCCL_MIN_NCHANNELS");
  EXPECT_EQ(d.env[1].after, "");
  EXPECT_EQ(d.env[2].field, "NCCL_NET_GDR_LEVEL");
  EXPECT_EQ(d.env[2].before + d.env[2].after, "SYSPHB");
  // NVLS/Simple now from 2M: 2M changed, 512K did not.
  ASSERT_EQ(d.collectives.at(0).per_size.size(), 1u);
  EXPECT_EQ(d.collectives.at(0).per_size[0].bytes, 2097152u);
  EXPECT_EQ(d.collectives.at(0).per_size[0].before, "Ring/LL128");
  EXPECT_EQ(d.collectives.at(0).per_size[0].after, "NVLS/Simple");
  EXPECT_EQ(d.collectives.at(0).busbw.size(), 11u);
  EXPECT_EQ(d.collectives.at(0).sizes_only_b, (std::vector<std::uint64_t>{33554432}));
  EXPECT_TRUE(d.collectives.at(0).sizes_only_a.empty());
  EXPECT_TRUE(d.collectives.at(0).busbw_differs);
}

TEST(ProfileDiff, SameResultsAreIdenticalWhateverTheProvenance) {
  const Profile a = read_report_profile(kDemo);
  Profile b = a;
  b.provenance.date = "2027-01-01T00:00:00Z";
  b.provenance.trials = 12;
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_TRUE(d.identical());
  EXPECT_NE(
      render_profile_diff(d, a, "a", b, "b").find("identical: same shape, env, per-size choices and results"),
      std::string::npos);
}

TEST(ProfileDiff, AnyBusbwChangeIsADifference) {
  const Profile a = read_report_profile(kDemo);
  Profile b = a;
  b.collectives["all_reduce"].results.tuned[3] *= 1.5;
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_FALSE(d.identical());
  EXPECT_TRUE(d.env.empty());
  EXPECT_TRUE(d.collectives.at(0).per_size.empty());
  EXPECT_NE(render_profile_diff(d, a, "a", b, "b").find("1.500x"), std::string::npos);
}

TEST(ProfileDiff, KeepDefaultsAndAMovedRangeBoundaryAreDifferences) {
  const Profile a = read_report_profile(kDemo);
  Profile b = a;
  b.collectives["all_reduce"].per_size[0].max_bytes = 262143;  // Ring/LL128 from 256K instead of 512K
  b.collectives["all_reduce"].per_size[1].min_bytes = 262144;
  ProfileDiff d = diff_profiles(a, b);
  ASSERT_EQ(d.collectives.at(0).per_size.size(), 1u);
  EXPECT_EQ(d.collectives.at(0).per_size[0].bytes, 262144u);  // a range start, not a measured size

  const Profile keep = read_report_profile("keep-defaults-2n.yaml");
  d = diff_profiles(a, keep);
  bool keep_defaults_changed = false;
  for (const FieldChange& c : d.shape)
    keep_defaults_changed |= c.field == "keep_defaults" && c.after == "true";
  EXPECT_TRUE(keep_defaults_changed);
  EXPECT_EQ(d.env.size(), a.env.size());  // every variable removed
}

TEST(ProfileDiff, AProfileHoldingNanIsIdenticalToItself) {
  const Profile p = read_report_profile("nan-2n.yaml");  // NaN baseline, tuned value and geomean
  const ProfileDiff same = diff_profiles(p, p);
  EXPECT_FALSE(same.collectives.at(0).busbw_differs);
  EXPECT_TRUE(same.identical());

  Profile b = p;
  b.collectives["all_reduce"].results.tuned[0] =
      std::nan("");  // a known value that became unknown is a change
  EXPECT_TRUE(diff_profiles(p, b).collectives.at(0).busbw_differs);
  b = p;
  b.collectives["all_reduce"].results.speedup_geomean = 1.1;
  EXPECT_TRUE(diff_profiles(p, b).collectives.at(0).busbw_differs);
}

TEST(ProfileDiff, UnknownValuesAndRatiosReadNa) {
  const Profile a = read_report_profile("nan-2n.yaml");
  Profile b = a;
  b.collectives["all_reduce"].results.tuned[0] =
      3;  // 8 B: 1.5 -> 3 is a change, the other rows keep their unknowns
  const std::string text = render_profile_diff(diff_profiles(a, b), a, "a", b, "b");
  EXPECT_NE(text.find("         8        1.50        1.50   1.000x        1.50        3.00   2.000x\n"),
            std::string::npos)
      << text;
  // The rows that did not change, unknowns and all, are counted, not printed.
  EXPECT_EQ(text.find("        1K "), std::string::npos) << text;
  EXPECT_EQ(text.find("        8M "), std::string::npos) << text;
  EXPECT_NE(text.find(" sizes unchanged\n"), std::string::npos) << text;
  EXPECT_NE(text.find("speedup over the defaults: n/a -> n/a\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
}

// Profile v3: each communicator shape compares with the same shape of the other profile, and the
// settings withheld from env compare by what they set.
TEST(ProfileDiff, EachCommunicatorShapeAndTheWithheldSettingsCompare) {
  const Profile a = read_report_profile("collectives/2n.yaml");
  Profile b = a;
  CommunicatorSection rail{2, 1, CommRole::rail, {}};
  rail.collectives["all_reduce"] = a.collectives.at("all_reduce");
  rail.collectives["all_reduce"].per_size = {{0, 1048576, "Tree", "Simple", 0}};
  b.shapes.push_back(rail);
  b.withheld.push_back({{{"NCCL_BUFFSIZE", "8388608"}}, "rail (2 nodes x 1): all_reduce -20% at 1M"});
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_FALSE(d.identical());
  const auto rail_diff =
      std::find_if(d.collectives.begin(), d.collectives.end(),
                   [](const CollectiveDiff& c) { return c.name == "rail: 2 nodes x 1 rank, all_reduce"; });
  ASSERT_NE(rail_diff, d.collectives.end());
  EXPECT_FALSE(rail_diff->in_a);
  ASSERT_EQ(d.withheld.size(), 1u);
  EXPECT_EQ(d.withheld[0].field, "NCCL_BUFFSIZE=8388608");
  const std::string text = render_profile_diff(d, a, "a/2n.yaml", b, "b/2n.yaml");
  EXPECT_NE(text.find("\nrail: 2 nodes x 1 rank, all_reduce: measured in B only\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  + NCCL_BUFFSIZE=8388608: rail (2 nodes x 1): all_reduce -20% at 1M\n"),
            std::string::npos)
      << text;
  // The same rail on both sides with another per-size choice: its own change, under its name.
  Profile c = b;
  c.shapes[0].collectives["all_reduce"].per_size = {{0, 1048576, "Ring", "LL", 0}};
  const std::string changed = render_profile_diff(diff_profiles(b, c), b, "b", c, "c");
  EXPECT_NE(changed.find("per-size choices of rail: 2 nodes x 1 rank, all_reduce"), std::string::npos)
      << changed;
  EXPECT_TRUE(diff_profiles(b, b).identical());
}

TEST(ProfileDiff, NcclsModelComparesPairByPair) {
  // The same profile whose NCCL predicts otherwise (a new version, another topology): a changed
  // pair, one gone and one new are differences, whatever was measured.
  Result<Profile> read = read_profile(test_support::fixture("profiles/nccl-model-2n.yaml"));
  ASSERT_TRUE(read.ok()) << read.error();
  const Profile a = *read;
  Profile b = a;
  std::vector<ModelPair>& model = b.provenance.nccl_observed.nccl_model.at("all_reduce");
  ASSERT_EQ(model[5].algo + "/" + model[5].proto, "RING/SIMPLE");
  model[5].busbw = 300.0;
  model.pop_back();  // NVLS/SIMPLE
  model.push_back({"COLLNET_DIRECT", "SIMPLE", 30.5, std::nullopt});
  EXPECT_TRUE(diff_profiles(a, a).identical());
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_FALSE(d.identical());
  ASSERT_EQ(d.nccl_model.size(), 3u);
  const std::string text = render_profile_diff(d, a, "a", b, "b");
  EXPECT_NE(text.find("\nNCCL's model (latency, busbw it predicts at large sizes)\n"
                      "  + all_reduce COLLNET_DIRECT/SIMPLE: 30.5 us, busbw unknown\n"
                      "  - all_reduce NVLS/SIMPLE: 23.0 us, 302.25 GB/s\n"
                      "  ~ all_reduce RING/SIMPLE: 12.6 us, 255.50 GB/s -> 12.6 us, 300.00 GB/s\n"),
            std::string::npos)
      << text;
  // A model on one side only: each of its pairs is named.
  Profile without = a;
  without.provenance.nccl_observed.nccl_model.clear();
  EXPECT_EQ(diff_profiles(without, a).nccl_model.size(), 7u);
}

// A world-only profile against a three-shape one: the schema and what NCCL said differently
// (NVLS) are named, the sections keep the profile's order, and unchanged numbers are counted
// ("N sizes unchanged"), not printed line by line.
TEST(ProfileDiff, SchemaNvlsAndUnchangedSizesInProfileOrder) {
  Profile a = read_report_profile(kDemo);
  NcclObservation merged;
  merged.transport = "IB";
  merged.nvls_available = false;
  merged.nvls_channels = 16;
  a.provenance.nccl_observed.defaults = merged;
  Profile b = a;
  b.provenance.nccl_observed.defaults->nvls_available = true;
  b.withheld.push_back({{{"NCCL_IB_QPS_PER_CONNECTION", "4"}}, "rail: slower"});
  const ProfileDiff d = diff_profiles(a, b);
  const std::string text = render_profile_diff(d, a, "a", b, "b");
  EXPECT_NE(text.find("  schema: nccltune/profile/v2 -> nccltune/profile/v3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  NVLS: unavailable -> available, 16 channels\n"), std::string::npos) << text;
  EXPECT_NE(text.find(": unchanged ("), std::string::npos) << text;
  EXPECT_EQ(text.find("1.000x\n"), std::string::npos) << text;
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 20) << text;
}
