// The profile store: exact node count, else the nearest tuned count of the same node type (below
// or above preferred), else nothing; only <N>n.yaml names are profiles.
#include "profile/profile_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

const std::string kKey = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";

class ProfileStore : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(store_ / kKey); }

  void add(const std::string& name, const std::string& key = kKey) {
    write_file(store_ / key / name, "schema: nccltune/profile/v1\n");
  }
  // The tuned node count find_profile picks for a job of `nodes`, or 0 for none.
  int pick(int nodes, bool prefer_below = true) {
    const auto match = find_profile(store_, kKey, nodes, prefer_below);
    EXPECT_TRUE(match.ok()) << match.error();
    if (!match.ok() || !*match) return 0;
    EXPECT_EQ((*match)->file, store_ / kKey / (std::to_string((*match)->tuned_nodes) + "n.yaml"));
    EXPECT_EQ((*match)->exact, (*match)->tuned_nodes == nodes);
    return (*match)->tuned_nodes;
  }

  const TempDir scratch_{"nccltune-store"};
  const std::filesystem::path store_ = scratch_.path();
};

}  // namespace

TEST(ProfileFileNodes, OnlyPlainCounts) {
  EXPECT_EQ(profile_file_nodes("2n.yaml"), 2);
  EXPECT_EQ(profile_file_nodes("128n.yaml"), 128);
  for (const char* other : {"n.yaml", "02n.yaml", "0n.yaml", "-2n.yaml", "+2n.yaml", "2n.yml", "2n.yaml.tmp",
                            "2N.yaml", "2 n.yaml", "topology.xml", "99999999999n.yaml", "2n.yaml~"})
    EXPECT_FALSE(profile_file_nodes(other).has_value()) << other;
}

TEST_F(ProfileStore, ExactCountWins) {
  add("2n.yaml");
  add("4n.yaml");
  add("8n.yaml");
  EXPECT_EQ(pick(4), 4);
  EXPECT_EQ(pick(4, false), 4);
}

TEST_F(ProfileStore, NearestBelowPreferredByDefault) {
  add("2n.yaml");
  add("8n.yaml");
  add("16n.yaml");
  EXPECT_EQ(pick(6), 2);
  EXPECT_EQ(pick(12), 8);
  EXPECT_EQ(pick(64), 16);
  EXPECT_EQ(pick(3), 2);  // nothing below 2 nodes but 1 node, which never stands in
}

TEST_F(ProfileStore, OneNodeAndSeveralNeverStandInForEachOther) {
  add("2n.yaml");
  EXPECT_EQ(pick(1), 0);  // a single-node job: only 1n.yaml
  EXPECT_EQ(pick(1, false), 0);
  add("1n.yaml");
  EXPECT_EQ(pick(1), 1);
  EXPECT_EQ(pick(4), 2);  // a multi-node job: the nearest multi-node count, never 1n.yaml
  std::filesystem::remove(store_ / kKey / "2n.yaml");
  EXPECT_EQ(pick(4), 0);
  EXPECT_EQ(pick(4, false), 0);
}

TEST_F(ProfileStore, NearestAboveWhenPreferred) {
  add("2n.yaml");
  add("8n.yaml");
  add("16n.yaml");
  EXPECT_EQ(pick(6, false), 8);
  EXPECT_EQ(pick(3, false), 8);
  EXPECT_EQ(pick(64, false), 16);  // nothing above: the nearest below
}

TEST_F(ProfileStore, OtherFilesAreNotProfiles) {
  add("topology.xml");
  add("journal.jsonl");
  add("04n.yaml");
  add("4n.yml");
  add(".4n.yaml.tmp");
  std::filesystem::create_directories(store_ / kKey / "8n.yaml.d");
  EXPECT_EQ(pick(4), 0);
  add("2n.yaml");
  EXPECT_EQ(pick(4), 2);
}

TEST_F(ProfileStore, OtherNodeTypesAreNotNeighbours) {
  add("4n.yaml", "a100-80gb.8gpu.nvswitch.8xib200.pix.nccl2.28");
  EXPECT_EQ(pick(4), 0);
  const auto unknown = find_profile(store_, "no-such-type", 4, true);
  ASSERT_TRUE(unknown.ok()) << unknown.error();
  EXPECT_FALSE(unknown->has_value());
}

TEST_F(ProfileStore, BrokenExactEntryIsStillTheMatch) {
  // A dangling link in place of the exact profile is reported by whoever opens it, not replaced
  // by a neighbour the admin did not choose.
  add("2n.yaml");
  std::filesystem::create_symlink(store_ / "missing.yaml", store_ / kKey / "4n.yaml");
  EXPECT_EQ(pick(4), 4);
}

TEST_F(ProfileStore, Errors) {
  for (const char* key : {"", ".", "..", "../etc", "a/b", "a b", "k\n"}) {
    const auto match = find_profile(store_, key, 2, true);
    EXPECT_FALSE(match.ok()) << "key '" << key << "'";
  }
  EXPECT_FALSE(find_profile(store_, kKey, 0, true).ok());
  const auto missing = find_profile(store_ / "absent", kKey, 2, true);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("absent"), std::string::npos) << missing.error();
  write_file(store_ / "plain-file", "x");
  EXPECT_FALSE(find_profile(store_, "plain-file", 2, true).ok());
}

namespace {

Profile stored(const std::string& key, int nodes) {
  Profile profile;
  profile.shape.node_type_key = key;
  profile.shape.nodes = nodes;
  profile.shape.gpus_per_node = 8;
  profile.shape.ranks = nodes * 8;
  profile.env = {{"NCCL_ALGO", "Ring"}};
  return profile;
}

}  // namespace

TEST_F(ProfileStore, LoadReadsTheCheckedProfile) {
  write_file(store_ / kKey / "2n.yaml", profile_to_yaml(stored(kKey, 2)));
  const auto exact = load_store_profile(store_, kKey, 2, true, ::geteuid());
  ASSERT_TRUE(exact.ok()) << exact.error();
  ASSERT_TRUE(exact->has_value());
  EXPECT_EQ((*exact)->profile, stored(kKey, 2));
  EXPECT_TRUE((*exact)->match.exact);
  EXPECT_EQ((*exact)->match.file, store_ / kKey / "2n.yaml");

  const auto nearest = load_store_profile(store_, kKey, 3, true, ::geteuid());
  ASSERT_TRUE(nearest.ok()) << nearest.error();
  ASSERT_TRUE(nearest->has_value());
  EXPECT_FALSE((*nearest)->match.exact);
  EXPECT_EQ((*nearest)->match.tuned_nodes, 2);

  const auto none = load_store_profile(store_, "other-type", 2, true, ::geteuid());
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_FALSE(none->has_value());
}

TEST_F(ProfileStore, LoadRefusesMisplacedUntrustedOrBrokenProfiles) {
  const auto refusal = [this](int nodes) {
    const auto loaded = load_store_profile(store_, kKey, nodes, true, ::geteuid());
    EXPECT_FALSE(loaded.ok()) << nodes << " nodes";
    return loaded.ok() ? std::string() : loaded.error();
  };
  write_file(store_ / kKey / "2n.yaml", profile_to_yaml(stored("other-type", 2)));
  EXPECT_NE(refusal(2).find("shape.key 'other-type' does not match its directory"), std::string::npos);
  write_file(store_ / kKey / "4n.yaml", profile_to_yaml(stored(kKey, 8)));
  EXPECT_NE(refusal(4).find("shape.nodes 8 does not match its file name"), std::string::npos);
  write_file(store_ / kKey / "8n.yaml", profile_to_yaml(stored(kKey, 8)));
  ::chmod((store_ / kKey / "8n.yaml").c_str(), 0666);
  EXPECT_NE(refusal(8).find("writable by group or others"), std::string::npos);
  write_file(store_ / kKey / "16n.yaml", "schema: nccltune/profile/v1\nshape: [\n");
  EXPECT_NE(refusal(16).find("16n.yaml:"), std::string::npos);
}
