// `nccltune diff`: what changed between two profiles. A golden diff of the demo profile against
// the same shape after an NCCL upgrade (regenerate with NCCLTUNE_UPDATE_GOLDEN=1 and review the
// diff), and each kind of change on its own.
#include "profile_diff.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nccltune;

namespace {

const std::string kReport = std::string(NCCLTUNE_FIXTURES) + "/report";
const std::string kDemo = "store/h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28/2n.yaml";

void expect_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = std::filesystem::path(NCCLTUNE_FIXTURES) / "golden" / name;
  const char* update = std::getenv("NCCLTUNE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run with NCCLTUNE_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << path;
}

Profile read_fixture(const std::string& relative) {
  auto profile = read_profile(kReport + "/" + relative);
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : Profile{};
}

}  // namespace

TEST(ProfileDiff, NcclUpgradeGolden) {
  const Profile a = read_fixture(kDemo), b = read_fixture("upgraded-2n.yaml");
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_FALSE(d.identical());
  expect_golden("diff-nccl-upgrade.txt", render_profile_diff(d, a, "a/2n.yaml", b, "b/2n.yaml"));
}

TEST(ProfileDiff, NcclUpgradeFindsEachKindOfChange) {
  const ProfileDiff d = diff_profiles(read_fixture(kDemo), read_fixture("upgraded-2n.yaml"));
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
  ASSERT_EQ(d.per_size.size(), 1u);
  EXPECT_EQ(d.per_size[0].bytes, 2097152u);
  EXPECT_EQ(d.per_size[0].before, "Ring/LL128");
  EXPECT_EQ(d.per_size[0].after, "NVLS/Simple");
  EXPECT_EQ(d.busbw.size(), 11u);
  EXPECT_EQ(d.sizes_only_b, (std::vector<std::uint64_t>{33554432}));
  EXPECT_TRUE(d.sizes_only_a.empty());
  EXPECT_TRUE(d.busbw_differs);
}

TEST(ProfileDiff, SameResultsAreIdenticalWhateverTheProvenance) {
  const Profile a = read_fixture(kDemo);
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
  const Profile a = read_fixture(kDemo);
  Profile b = a;
  b.results.tuned[3] *= 1.5;
  const ProfileDiff d = diff_profiles(a, b);
  EXPECT_FALSE(d.identical());
  EXPECT_TRUE(d.env.empty());
  EXPECT_TRUE(d.per_size.empty());
  EXPECT_NE(render_profile_diff(d, a, "a", b, "b").find("1.500x"), std::string::npos);
}

TEST(ProfileDiff, KeepDefaultsAndAMovedRangeBoundaryAreDifferences) {
  const Profile a = read_fixture(kDemo);
  Profile b = a;
  b.per_size[0].max_bytes = 262143;  // Ring/LL128 from 256K instead of 512K
  b.per_size[1].min_bytes = 262144;
  ProfileDiff d = diff_profiles(a, b);
  ASSERT_EQ(d.per_size.size(), 1u);
  EXPECT_EQ(d.per_size[0].bytes, 262144u);  // a range start, not a measured size

  const Profile keep = read_fixture("keep-defaults-2n.yaml");
  d = diff_profiles(a, keep);
  bool keep_defaults_changed = false;
  for (const FieldChange& c : d.shape)
    keep_defaults_changed |= c.field == "keep_defaults" && c.after == "true";
  EXPECT_TRUE(keep_defaults_changed);
  EXPECT_EQ(d.env.size(), a.env.size());  // every variable removed
}
