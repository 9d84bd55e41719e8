// The store lookup a job of any node count goes through (find_profile_for_job): a measured count
// gets its own profile, another count the serving rule over the measured counts around it.
#include "node/profile_for_job.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measured_profile.h"
#include "test_files.h"

namespace nccltune {
namespace {

Profile measured(int nodes, Env env, std::vector<SizeChoice> per_size) {
  return test_support::measured_profile(nodes, std::move(env), std::move(per_size));
}

const SizeChoice kSmallTree{0, 65535, "Tree", "LL", 0};
const SizeChoice kMidRing{65536, 1048576, "Ring", "LL128", 0};
const SizeChoice kMidTree{65536, 1048576, "Tree", "LL128", 0};

// A store with 2n.yaml and 8n.yaml of one key, owned by this user and not writable by others.
class NodeCountStore : public ::testing::Test {
 protected:
  void SetUp() override {
    ::chmod(dir_.path().c_str(), 0755);
    store_ = dir_.path() / "store";
    const Profile two =
        measured(2, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring"}}, {kSmallTree, kMidRing});
    const Profile eight = measured(8, {{"NCCL_NET_GDR_LEVEL", "SYS"}}, {kSmallTree, kMidTree});
    ASSERT_TRUE(write_profile(store_, two));
    ASSERT_TRUE(write_profile(store_, eight));
  }
  Result<ProfileForJob> job(int nodes) {
    return find_profile_for_job(store_, "h100-80gb-hbm3.2gpu.nvswitch.2xib400.pix.nccl2.28",
                                JobShape{nodes, 2}, true, ::geteuid());
  }
  test_support::TempDir dir_;
  std::filesystem::path store_;
};

TEST_F(NodeCountStore, AMeasuredCountGetsItsOwnProfile) {
  auto found = job(2);
  ASSERT_TRUE(found) << found.error();
  ASSERT_TRUE(found->profile());
  EXPECT_EQ(found->profile()->env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring"}}));
  EXPECT_TRUE(found->served.withheld.empty());
  EXPECT_EQ(found->served.sources.size(), 1u);
}

TEST_F(NodeCountStore, BetweenAndAboveTheRuleApplies) {
  auto between = job(4);
  ASSERT_TRUE(between) << between.error();
  ASSERT_TRUE(between->profile());
  EXPECT_EQ(between->profile()->env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  EXPECT_EQ(between->served.sources.size(), 2u);
  auto above = job(64);
  ASSERT_TRUE(above) << above.error();
  ASSERT_TRUE(above->profile());
  EXPECT_EQ(above->profile()->env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  EXPECT_TRUE(above->profile()->collectives.at("all_reduce").per_size.empty());
  EXPECT_EQ(above->served.sources.size(), 1u);
  // One node and several never stand in for each other.
  auto one = job(1);
  ASSERT_TRUE(one) << one.error();
  EXPECT_FALSE(one->profile());
}


// What serves jobs (env, nccltune-env, the plugins, nccltuned's node env) refuses a profile show
// refuses, read for jobs or whole: cut short, a misspelled algorithm, a variable NCCL does not
// read. One line, naming the file and its line.
TEST(ProfileForJob, AProfileShowRefusesIsRefused) {
  const std::string key = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";
  for (const char* bad : {"torn", "misspelled-algo", "unknown-variable"}) {
    SCOPED_TRACE(bad);
    test_support::TempDir dir;
    ::chmod(dir.path().c_str(), 0755);
    const std::filesystem::path store = dir.path() / "store";
    ASSERT_TRUE(make_store_directories(store / key));
    std::filesystem::copy_file(test_support::fixture(std::string("profiles/refused/") + bad + "-2n.yaml"),
                               store / key / "2n.yaml");
    ::chmod((store / key / "2n.yaml").c_str(), 0644);
    for (const ProfileParts parts : {ProfileParts::for_jobs, ProfileParts::whole}) {
      const Result<ProfileForJob> found = find_profile_for_job(store, key, JobShape{2, 8}, true, ::geteuid(), parts);
      ASSERT_FALSE(found);
      EXPECT_NE(found.error().find("2n.yaml:"), std::string::npos) << found.error();
      EXPECT_EQ(found.error().find('\n'), std::string::npos) << found.error();
    }
  }
}

}  // namespace
}  // namespace nccltune
