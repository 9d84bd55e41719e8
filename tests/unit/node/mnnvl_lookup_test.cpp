// Serving by NCCL's node count on a multi-node NVLink system: the store's <nodes>n<hosts>h.yaml
// found by a job that knows its hosts (env) and by a communicator that knows only NCCL's counts
// (the tuner plugin); how a job's hosts are taken as NVLink domains (job_domains); layouts never
// mixed by the node-count rule; HGX lookups as before.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/job_domains.h"
#include "node/profile_for_job.h"
#include "profile/profile.h"
#include "test_files.h"

namespace nccltune {
namespace {

const std::string kRack = "gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28";

// The fixture store's GB200 key (1n4h, 2n4h, 2n8h), copied with the modes the trust checks want;
// `names` picks which of its files.
class MnnvlStore : public ::testing::Test {
 protected:
  void SetUp() override { ::chmod(dir_.path().c_str(), 0755); }
  void stock(std::initializer_list<const char*> names) {
    ASSERT_TRUE(make_store_directories(store_ / kRack));
    for (const char* name : names) {
      std::filesystem::copy_file(test_support::fixture("store/" + kRack + "/" + name), store_ / kRack / name);
      ::chmod((store_ / kRack / name).c_str(), 0644);
    }
  }
  // The file a communicator of `ranks` over NCCL's `nodes` is served from, "" for none fitting.
  std::string communicator_file(int nodes, int ranks, bool with_sections = true) {
    const JobShape job{nodes, ranks / nodes, std::nullopt};
    const auto section = [&](const Profile& profile) {
      if (!with_sections) return false;
      for (const CommunicatorSection& s : profile.shapes)
        if (s.nodes == job.nodes && s.ranks_per_node == *job.gpus_per_node) return true;
      return false;
    };
    Result<ProfileForJob> found = find_profile_for_communicator(store_, kRack, job, section, true, ::geteuid());
    EXPECT_TRUE(found) << found.error();
    if (!found || !found->stored) return "";
    const std::string served_by = found->fits                              ? ""
                                  : section(found->stored->profile) ? " (a section)"
                                                                    : " (not fitting)";
    return found->stored->match.file.filename().string() + served_by;
  }
  std::filesystem::path directory() const { return store_ / kRack; }

  test_support::TempDir dir_;
  std::filesystem::path store_ = dir_.path() / "store";
};

TEST(MnnvlKey, TheSegmentNamesIt) {
  EXPECT_TRUE(is_mnnvl_node_type_key("gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28"));
  EXPECT_TRUE(is_mnnvl_node_type_key("mnnvl.gb300"));
  EXPECT_TRUE(is_mnnvl_node_type_key("gb300.mnnvl"));
  for (const char* other : {"h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28", "gb200.nomnnvl.x", "gb200.mnnvl2",
                            "mnnvl-x.y", "x_mnnvl.y", ""})
    EXPECT_FALSE(is_mnnvl_node_type_key(other)) << other;
}

TEST_F(MnnvlStore, TheCommunicatorOfOneDomainGetsItsProfile) {
  stock({"1n4h.yaml", "2n4h.yaml", "2n8h.yaml"});
  EXPECT_EQ(communicator_file(1, 16), "1n4h.yaml");  // NCCL's 1 node of 16: 4 trays of one rack
  EXPECT_EQ(communicator_file(2, 16), "2n4h.yaml");  // 2 domains of 2 trays
  EXPECT_EQ(communicator_file(2, 32), "2n8h.yaml");  // 2 domains of 4 trays
}

TEST_F(MnnvlStore, ATrayOrARailGetsTheSectionOfItsShape) {
  stock({"1n4h.yaml"});
  // One tray's 4 GPUs and one rank per tray of the rack are both NCCL's 1 node x 4.
  EXPECT_EQ(communicator_file(1, 4), "1n4h.yaml (a section)");
  // Without that section the rack's profile does not serve it, and says so.
  EXPECT_EQ(communicator_file(1, 4, false), "1n4h.yaml (not fitting)");
}

TEST_F(MnnvlStore, LayoutsAreNeverMixed) {
  stock({"2n8h.yaml"});
  // 3 domains of 4 trays: the rule from 2n8h (its layout), as 3 nodes would be served from 2.
  EXPECT_EQ(communicator_file(3, 48), "2n8h.yaml");
  // 3 domains of 2 trays (8 ranks each): no profile of that layout.
  EXPECT_EQ(communicator_file(3, 24), "");
  EXPECT_EQ(communicator_file(2, 16), "2n8h.yaml (not fitting)");
  // A job knowing its hosts: 16 hosts as 4 domains of 4 is 2n8h's layout, as 8 domains of 2 not.
  Result<ProfileForJob> four = find_profile_for_job(store_, kRack, JobShape{4, 16, 16}, true, ::geteuid());
  ASSERT_TRUE(four) << four.error();
  ASSERT_TRUE(four->stored);
  EXPECT_EQ(four->stored->match.file.filename(), "2n8h.yaml");
  Result<ProfileForJob> eight = find_profile_for_job(store_, kRack, JobShape{8, 8, 16}, true, ::geteuid());
  ASSERT_TRUE(eight) << eight.error();
  EXPECT_FALSE(eight->stored);
}

TEST_F(MnnvlStore, OneDomainAndTwoOnTheSameHostsAreApart) {
  stock({"1n4h.yaml", "2n4h.yaml"});
  for (const auto& [domains, file] : {std::pair{1, "1n4h.yaml"}, std::pair{2, "2n4h.yaml"}}) {
    Result<ProfileForJob> found =
        find_profile_for_job(store_, kRack, JobShape{domains, 16 / domains, 4}, true, ::geteuid());
    ASSERT_TRUE(found) << found.error();
    ASSERT_TRUE(found->profile());
    EXPECT_EQ(found->stored->match.file.filename(), file);
    EXPECT_EQ(found->profile()->shape.nodes, domains);
  }
}

TEST_F(MnnvlStore, HostCountedProfilesServeAsBefore) {
  stock({"1n4h.yaml"});
  Result<Profile> rack = read_profile(directory() / "1n4h.yaml");
  ASSERT_TRUE(rack) << rack.error();
  Profile tray = *rack;
  tray.shape.mnnvl = false;
  tray.shape.hosts = 0;
  tray.shape.gpus_per_node = 4;
  tray.shape.ranks = 4;
  tray.shapes.clear();
  ASSERT_TRUE(write_profile(store_, tray));
  // One tray alone: NCCL's 1 node x 4, measured as the world of 1n.yaml, which wins over a section.
  EXPECT_EQ(communicator_file(1, 4), "1n.yaml");
  Result<ProfileForJob> job = find_profile_for_job(store_, kRack, JobShape{1, 4, std::nullopt}, true, ::geteuid());
  ASSERT_TRUE(job) << job.error();
  ASSERT_TRUE(job->profile());
  EXPECT_EQ(job->stored->match.file.filename(), "1n.yaml");
}

// job_domains: a Slurm job of 4 hosts on the rack's node type.
TEST_F(MnnvlStore, OneLayoutTunedForTheHostsIsTaken) {
  stock({"1n4h.yaml", "2n8h.yaml"});
  Result<JobDomains> four = job_domains(JobShape{4, 4, std::nullopt}, kRack, std::nullopt, "--domains", directory());
  ASSERT_TRUE(four) << four.error();
  EXPECT_EQ(four->job, (JobShape{1, 16, 4}));
  EXPECT_EQ(describe_job_domains(*four, "--domains"),
            "4 hosts taken as 1 NVLink domain (the only layout tuned for 4 hosts), --domains N says otherwise");
}

TEST_F(MnnvlStore, TwoLayoutsAskForDomains) {
  stock({"1n4h.yaml", "2n4h.yaml"});
  Result<JobDomains> four = job_domains(JobShape{4, 4, std::nullopt}, kRack, std::nullopt, "--domains", directory());
  ASSERT_FALSE(four);
  EXPECT_EQ(four.error(), "4 hosts on MNNVL node type " + kRack +
                              ": the store holds profiles of 1 and 2 NVLink domains for 4 hosts; say which with "
                              "--domains N");
  Result<JobDomains> two = job_domains(JobShape{4, 4, std::nullopt}, kRack, "2", "--domains", directory());
  ASSERT_TRUE(two) << two.error();
  EXPECT_EQ(two->job, (JobShape{2, 8, 4}));
  EXPECT_EQ(describe_job_domains(*two, "--domains"), "4 hosts in 2 NVLink domains (--domains)");
}

TEST_F(MnnvlStore, OneLayoutServesOtherHostCounts) {
  stock({"2n8h.yaml"});
  Result<JobDomains> twelve = job_domains(JobShape{12, 4, std::nullopt}, kRack, std::nullopt, "--domains", directory());
  ASSERT_TRUE(twelve) << twelve.error();
  EXPECT_EQ(twelve->job, (JobShape{3, 16, 12}));
  Result<JobDomains> six = job_domains(JobShape{6, 4, std::nullopt}, kRack, std::nullopt, "--domains", directory());
  ASSERT_FALSE(six);
  EXPECT_NE(six.error().find("say which with --domains N"), std::string::npos) << six.error();
}

TEST_F(MnnvlStore, DomainsAreValidated) {
  stock({"1n4h.yaml"});
  const JobShape four{4, 4, std::nullopt};
  const auto error = [&](const char* domains) {
    Result<JobDomains> found = job_domains(four, kRack, std::string(domains), "--domains", directory());
    EXPECT_FALSE(found) << domains;
    return found ? std::string() : found.error();
  };
  EXPECT_EQ(error("3"), "--domains: 4 hosts do not split into 3 NVLink domains of as many hosts each");
  EXPECT_EQ(error("8"), "--domains: 8 NVLink domains cannot be made of 4 hosts");
  EXPECT_EQ(error("0"), "--domains: '0' is not a whole number from 1");
  EXPECT_EQ(error("two"), "--domains: 'two' is not a whole number from 1");
  Result<JobDomains> hgx = job_domains(four, "h100.8gpu", std::string("1"), "--domains", directory());
  ASSERT_FALSE(hgx);
  EXPECT_EQ(hgx.error(), "--domains: node type h100.8gpu has no multi-node NVLink (no mnnvl in its key): its nodes are hosts");
}

TEST_F(MnnvlStore, HgxAndOneHostJobsAreAsTheyAre) {
  stock({"1n4h.yaml"});
  const JobShape one{1, 4, std::nullopt};
  Result<JobDomains> tray = job_domains(one, kRack, std::nullopt, "--domains", directory());
  ASSERT_TRUE(tray) << tray.error();
  EXPECT_EQ(tray->job, one);
  EXPECT_FALSE(tray->mnnvl());
  const JobShape hgx{4, 8, std::nullopt};
  Result<JobDomains> plain = job_domains(hgx, "h100.8gpu", std::nullopt, "--domains", directory());
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_EQ(plain->job, hgx);
  EXPECT_EQ(describe_job_domains(*plain, "--domains"), "");
}

}  // namespace
}  // namespace nccltune
