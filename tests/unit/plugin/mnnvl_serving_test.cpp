// The plugins on a multi-node NVLink rack (GB200 NVL72), where NCCL's node is the NVLink domain:
// the tuner plugin serves NCCL's (nRanks, nNodes) from the store's <nodes>n<hosts>h.yaml and says
// which in its INFO line; the env plugin takes a launcher's hosts as NCCL's domains from
// NCCLTUNE_DOMAINS or the store.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "plugin/communicator_profile.h"
#include "plugin/job_env_serving.h"
#include "test_files.h"

namespace nccltune {
namespace {

namespace fs = std::filesystem;
const std::string kRackKey = "gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28";

// A store of the fixture's GB200 profiles (`names`), a node config naming it and a node.yaml of
// the rack's node type.
class MnnvlServing : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path directory = store_ / kRackKey;
    fs::create_directories(directory);
    for (const fs::path& d : {scratch_.path(), store_, directory}) ::chmod(d.c_str(), 0755);
    std::string node = test_support::read_file(test_support::fixture("plugin/node.yaml"));
    const std::string hgx = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";
    node.replace(node.find(hgx), hgx.size(), kRackKey);
    test_support::write_file(scratch_.path() / "node.yaml", node);
    test_support::write_file(scratch_.path() / "nccltune.yaml", "env:\n  store: " + store_.string() + "\n");
    locations_.config = scratch_.path() / "nccltune.yaml";
    locations_.config_named = true;
    locations_.node_state = scratch_.path() / "node.yaml";
  }
  void stock(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      fs::copy_file(test_support::fixture("store/" + kRackKey + "/" + name), store_ / kRackKey / name);
      ::chmod((store_ / kRackKey / name).c_str(), 0644);
    }
  }
  static bool said(const std::vector<PluginLogLine>& log, const std::string& text) {
    return std::any_of(log.begin(), log.end(),
                       [&](const PluginLogLine& line) { return line.text.find(text) != std::string::npos; });
  }
  static std::string all(const std::vector<PluginLogLine>& log) {
    std::string text;
    for (const PluginLogLine& line : log) text += line.text + "\n";
    return text;
  }

  test_support::TempDir scratch_{"nccltune-mnnvl-plugin"};
  fs::path store_ = scratch_.path() / "store";
  ProfileLocations locations_;
};

TEST_F(MnnvlServing, NcclsOneNodeOfSixteenGetsTheRacksProfile) {
  stock({"1n4h.yaml", "2n4h.yaml"});
  const CommunicatorProfile world = find_communicator_profile(locations_, 16, 1, ::geteuid());
  ASSERT_TRUE(world.profile) << all(world.log);
  EXPECT_EQ(world.file.filename(), "1n4h.yaml");
  EXPECT_TRUE(said(world.log, "1n4h.yaml for 1 node, 16 ranks (1 NVLink domain of 16 GPUs on 4 hosts)"))
      << all(world.log);
  EXPECT_EQ(world.profile->collectives.at("all_reduce").per_size.back().algo, "NVLS");

  const CommunicatorProfile two = find_communicator_profile(locations_, 16, 2, ::geteuid());
  ASSERT_TRUE(two.profile) << all(two.log);
  EXPECT_EQ(two.file.filename(), "2n4h.yaml");
  EXPECT_TRUE(said(two.log, "(2 NVLink domains of 8 GPUs on 4 hosts)")) << all(two.log);
}

// On one rack a tray's 4 GPUs and one rank per tray are both NCCL's 1 node x 4: one section
// serves both.
TEST_F(MnnvlServing, ATrayCommunicatorGetsTheNodeSection) {
  stock({"1n4h.yaml"});
  const CommunicatorProfile tray = find_communicator_profile(locations_, 4, 1, ::geteuid());
  ASSERT_TRUE(tray.profile) << all(tray.log);
  EXPECT_EQ(tray.file.filename(), "1n4h.yaml");
  EXPECT_TRUE(said(tray.log, "its node: 1 NVLink domain x 4 ranks section")) << all(tray.log);
  EXPECT_EQ(tray.profile->collectives.at("all_reduce").per_size.back().algo, "Ring");
}

TEST_F(MnnvlServing, AShapeNotMeasuredKeepsNcclsChoices) {
  stock({"1n4h.yaml"});
  const CommunicatorProfile eight = find_communicator_profile(locations_, 8, 1, ::geteuid());
  EXPECT_FALSE(eight.profile);
  EXPECT_TRUE(said(eight.log, "tuned for 16 GPUs per NVLink domain (1 NVLink domain of 16 GPUs on 4 hosts)"))
      << all(eight.log);
}

TEST_F(MnnvlServing, TheEnvPluginTakesTheOneLayoutTunedForTheHosts) {
  stock({"1n4h.yaml"});
  const JobEnv served =
      job_env({{"SLURM_JOB_NUM_NODES", "4"}, {"SLURM_GPUS_ON_NODE", "4"}}, locations_, {2, 28, 9}, ::geteuid());
  EXPECT_EQ(served.values.at("NCCL_MIN_NCHANNELS"), "16") << all(served.log);
  EXPECT_TRUE(said(served.log, "4 hosts taken as 1 NVLink domain (the only layout tuned for 4 hosts)"))
      << all(served.log);
}

TEST_F(MnnvlServing, TheEnvPluginReadsNcclTuneDomains) {
  stock({"1n4h.yaml", "2n4h.yaml"});
  const std::map<std::string, std::string> slurm{{"SLURM_JOB_NUM_NODES", "4"}, {"SLURM_GPUS_ON_NODE", "4"}};
  const JobEnv asked = job_env(slurm, locations_, {2, 28, 9}, ::geteuid());
  EXPECT_TRUE(asked.values.empty());
  EXPECT_TRUE(said(asked.log, "say which with NCCLTUNE_DOMAINS N")) << all(asked.log);

  std::map<std::string, std::string> two = slurm;
  two["NCCLTUNE_DOMAINS"] = "2";
  const JobEnv served = job_env(two, locations_, {2, 28, 9}, ::geteuid());
  EXPECT_EQ(served.values.at("NCCL_MIN_NCHANNELS"), "24") << all(served.log);
  EXPECT_TRUE(said(served.log, "4 hosts in 2 NVLink domains (NCCLTUNE_DOMAINS)")) << all(served.log);

  two["NCCLTUNE_DOMAINS"] = "3";
  const JobEnv bad = job_env(two, locations_, {2, 28, 9}, ::geteuid());
  EXPECT_TRUE(bad.values.empty());
  EXPECT_TRUE(said(bad.log, "NCCLTUNE_DOMAINS: 4 hosts do not split into 3 NVLink domains")) << all(bad.log);
}

TEST_F(MnnvlServing, TheEnvPluginServesANamedMnnvlProfileByItsLayout) {
  locations_.profile_file = test_support::fixture("profiles/gb200-mnnvl-1n4h.yaml");
  const JobEnv served =
      job_env({{"SLURM_JOB_NUM_NODES", "4"}, {"SLURM_GPUS_ON_NODE", "4"}}, locations_, {2, 28, 9}, ::geteuid());
  EXPECT_EQ(served.values.at("NCCL_MIN_NCHANNELS"), "16") << all(served.log);
}

}  // namespace
}  // namespace nccltune
