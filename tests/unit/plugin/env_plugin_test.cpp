// The NCCL env plugin as NCCL 2.28.9 meets it: the built libnccl-env-nccltune.so is dlopen'd, its
// v2 and v1 tables looked up by name, init called with NCCL's version, then getEnv for variables
// NCCL reads. What it serves (job_env) is tested directly as well.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "nccl_logger_capture.h"
#include "plugin/job_env_serving.h"
#include "plugin/nccl_env_v1_v2.h"
#include "test_files.h"

namespace nccltune {
namespace {

using namespace nccl_abi;
namespace fs = std::filesystem;
using test_support::fixture;
using test_support::TempDir;
using test_support::write_file;

using test_support::all_log;
using test_support::capture_nccl_log;
using test_support::g_logged;
using test_support::kPluginNodeTypeKey;
using test_support::logged;

class EnvPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    g_logged.clear();
    for (const char* name : kVariables) unsetenv(name);
    write_file(scratch() / "empty-config.yaml", "");
    setenv("NCCLTUNE_CONFIG", (scratch() / "empty-config.yaml").c_str(), 1);
    setenv("NCCLTUNE_NODE_STATE", (scratch() / "no-node.yaml").c_str(), 1);
    library_ = dlopen(NCCLTUNE_ENV_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    v2_ = static_cast<const ncclEnv_v2_t*>(dlsym(library_, "ncclEnvPlugin_v2"));
    v1_ = static_cast<const ncclEnv_v1_t*>(dlsym(library_, "ncclEnvPlugin_v1"));
    ASSERT_NE(v2_, nullptr);
    ASSERT_NE(v1_, nullptr);
  }

  void TearDown() override {
    if (v2_ != nullptr) {
      EXPECT_EQ(v2_->finalize(), ncclSuccess);
    }
    if (library_ != nullptr) dlclose(library_);
    for (const char* name : kVariables) unsetenv(name);
  }

  const fs::path& scratch() const { return scratch_.path(); }

  // A store holding h100-2n.yaml (2 nodes x 8 GPUs, NCCL 2.28.9, env NCCL_NVLS_ENABLE=1) as
  // <store>/<key>/2n.yaml, the node.yaml naming that key, and a node config naming the store.
  fs::path make_store(const std::string& config_extra = "") {
    const fs::path store = scratch() / "store";
    fs::create_directories(store / kPluginNodeTypeKey);
    fs::copy_file(fixture("plugin/h100-2n.yaml"), store / kPluginNodeTypeKey / "2n.yaml",
                  fs::copy_options::overwrite_existing);
    chmod((store / kPluginNodeTypeKey / "2n.yaml").c_str(), 0644);
    for (const fs::path& directory : {store, store / kPluginNodeTypeKey}) chmod(directory.c_str(), 0755);
    write_file(scratch() / "nccltune.yaml", "env:\n  store: " + store.string() + "\n" + config_extra);
    setenv("NCCLTUNE_CONFIG", (scratch() / "nccltune.yaml").c_str(), 1);
    setenv("NCCLTUNE_NODE_STATE", fixture("plugin/node.yaml").c_str(), 1);
    return store;
  }

  void init(int minor = 28) {
    ASSERT_EQ(v2_->init(2, static_cast<std::uint8_t>(minor), 9, "", capture_nccl_log), ncclSuccess);
  }

  std::string get(const char* name) const {
    const char* value = v2_->getEnv(name);
    return value ? value : "(null)";
  }

  static constexpr std::array<const char*, 12> kVariables = {
      "NCCLTUNE_PROFILE", "NCCLTUNE_PROFILES",   "NCCLTUNE_CONFIG",      "NCCLTUNE_NODE_STATE",
      "NCCLTUNE_DISABLE", "NCCLTUNE_NODES",      "WORLD_SIZE",           "LOCAL_WORLD_SIZE",
      "NCCL_NVLS_ENABLE", "SLURM_JOB_NUM_NODES", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"};
  void* library_ = nullptr;
  const ncclEnv_v2_t* v2_ = nullptr;
  const ncclEnv_v1_t* v1_ = nullptr;
  TempDir scratch_{"nccltune-env-plugin"};
};

TEST_F(EnvPlugin, ServesTheStoresProfileForTheLaunchersShape) {
  make_store();
  setenv("WORLD_SIZE", "16", 1);
  setenv("LOCAL_WORLD_SIZE", "8", 1);
  init();
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "1") << all_log();
  EXPECT_EQ(get("NCCL_ALGO"), "(null)");  // not in the profile: NCCL's default
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "serving 1 variable(s)")) << all_log();
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "job shape from torchrun")) << all_log();
  // The same pointer on every call: NCCL may keep it until finalize.
  EXPECT_EQ(v2_->getEnv("NCCL_NVLS_ENABLE"), v2_->getEnv("NCCL_NVLS_ENABLE"));
}

TEST_F(EnvPlugin, TheJobsOwnValueWins) {
  make_store();
  setenv("WORLD_SIZE", "16", 1);
  setenv("LOCAL_WORLD_SIZE", "8", 1);
  init();
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "0");
  // Set empty by the job: NCCL reads "" as unset, and the profile does not fill it in.
  setenv("NCCL_NVLS_ENABLE", "", 1);
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "");
  unsetenv("NCCL_NVLS_ENABLE");
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "1");
  EXPECT_EQ(get("PATH"), std::getenv("PATH"));  // any variable NCCL asks for: the process's
}

TEST_F(EnvPlugin, ASecondInitStartsOver) {
  make_store();
  setenv("WORLD_SIZE", "16", 1);
  setenv("LOCAL_WORLD_SIZE", "8", 1);
  init();
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "1") << all_log();
  setenv("NCCLTUNE_DISABLE", "1", 1);
  init();
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "(null)");
}

TEST_F(EnvPlugin, V1ServesTheSameWithoutALogger) {
  make_store();
  setenv("OMPI_COMM_WORLD_SIZE", "16", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "8", 1);
  ASSERT_EQ(v1_->init(2, 28, 9, ""), ncclSuccess);
  const char* value = v1_->getEnv("NCCL_NVLS_ENABLE");
  ASSERT_NE(value, nullptr);
  EXPECT_STREQ(value, "1");
}

TEST_F(EnvPlugin, AnotherNcclVersionGetsNothingAndOneLine) {
  make_store();
  setenv("WORLD_SIZE", "16", 1);
  setenv("LOCAL_WORLD_SIZE", "8", 1);
  init(21);
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "(null)");
  EXPECT_TRUE(logged(NCCL_LOG_WARN, "tuned for 2.28, this job loads 2.21")) << all_log();
}

TEST_F(EnvPlugin, TheConfigsCompatibleRangeServesAcrossMinorVersions) {
  make_store("  nccl_compatible: 2.27-2.29\n");
  setenv("WORLD_SIZE", "16", 1);
  setenv("LOCAL_WORLD_SIZE", "8", 1);
  init(29);
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "1") << all_log();
  ASSERT_EQ(v2_->finalize(), ncclSuccess);
  g_logged.clear();
  init(30);  // outside the range
  EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "(null)");
  EXPECT_TRUE(logged(NCCL_LOG_WARN, "this job loads 2.30 (env.nccl_compatible: 2.27-2.29)")) << all_log();
}

TEST_F(EnvPlugin, FailsOpen) {
  struct Case {
    const char* what;
    void (*arrange)(const fs::path& scratch);
  };
  const Case cases[] = {
      {"no launcher", [](const fs::path&) {}},
      {"uneven ranks",
       [](const fs::path&) {
         setenv("WORLD_SIZE", "12", 1);
         setenv("LOCAL_WORLD_SIZE", "8", 1);
       }},
      {"disabled",
       [](const fs::path&) {
         setenv("WORLD_SIZE", "16", 1);
         setenv("LOCAL_WORLD_SIZE", "8", 1);
         setenv("NCCLTUNE_DISABLE", "1", 1);
       }},
      {"a broken config",
       [](const fs::path& scratch) {
         setenv("WORLD_SIZE", "16", 1);
         setenv("LOCAL_WORLD_SIZE", "8", 1);
         write_file(scratch / "nccltune.yaml", "env: {store: [\n");
       }},
      {"a store writable by others",
       [](const fs::path& scratch) {
         setenv("WORLD_SIZE", "16", 1);
         setenv("LOCAL_WORLD_SIZE", "8", 1);
         chmod((scratch / "store").c_str(), 0777);
       }},
      {"a garbage profile",
       [](const fs::path& scratch) {
         setenv("WORLD_SIZE", "16", 1);
         setenv("LOCAL_WORLD_SIZE", "8", 1);
         write_file(scratch / "store" / kPluginNodeTypeKey / "2n.yaml",
                    std::string("env: {NCCL_ALGO: \"\x01;rm -rf /\"}\n"));
       }},
      {"another GPU count per node",
       [](const fs::path&) {
         setenv("WORLD_SIZE", "8", 1);
         setenv("LOCAL_WORLD_SIZE", "4", 1);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    g_logged.clear();
    make_store();
    unsetenv("NCCLTUNE_DISABLE");
    c.arrange(scratch());
    init();
    EXPECT_EQ(get("NCCL_NVLS_ENABLE"), "(null)") << all_log();
    EXPECT_FALSE(g_logged.empty()) << "one line says why";
    EXPECT_EQ(v2_->finalize(), ncclSuccess);
    for (const char* name : {"WORLD_SIZE", "LOCAL_WORLD_SIZE"}) unsetenv(name);
    chmod((scratch() / "store").c_str(), 0755);
  }
}

// A profile `show` refuses (cut short, a misspelled algorithm, a variable NCCL does not read) is
// served by the plugin neither from the store nor named: nothing set, one warning naming the file
// and its line.
TEST_F(EnvPlugin, AProfileShowRefusesServesNothing) {
  for (const char* bad : {"torn", "misspelled-algo", "unknown-variable"}) {
    SCOPED_TRACE(bad);
    const fs::path file = fixture(std::string("profiles/refused/") + bad + "-2n.yaml");
    for (const bool named : {false, true}) {
      g_logged.clear();
      make_store();
      fs::copy_file(file, scratch() / "store" / kPluginNodeTypeKey / "2n.yaml",
                    fs::copy_options::overwrite_existing);
      if (named) setenv("NCCLTUNE_PROFILE", file.c_str(), 1);
      setenv("WORLD_SIZE", "16", 1);
      setenv("LOCAL_WORLD_SIZE", "8", 1);
      init();
      for (const char* name : {"NCCL_MIN_NCHANNELS", "NCCL_MIN_NCHANELS", "NCCL_ALGO", "NCCL_NVLS_ENABLE"})
        EXPECT_EQ(get(name), "(null)") << name << "\n" << all_log();
      EXPECT_TRUE(logged(NCCL_LOG_WARN, "2n.yaml:")) << all_log();
      EXPECT_EQ(test_support::count_logged(NCCL_LOG_WARN, ""), 1) << all_log();
      EXPECT_EQ(v2_->finalize(), ncclSuccess);
      for (const char* name : {"WORLD_SIZE", "LOCAL_WORLD_SIZE", "NCCLTUNE_PROFILE"}) unsetenv(name);
    }
  }
}

// ---- job_env, directly ------------------------------------------------------------------------

TEST(JobEnv, ServesTheNamedProfilesCheckedValues) {
  TempDir scratch{"nccltune-job-env"};
  write_file(scratch.path() / "profile.yaml",
             "schema: nccltune/profile/v1\n"
             "shape: {key: k, nodes: 2, gpus_per_node: 2, ranks: 4, nccl_version: \"2.28.9\"}\n"
             "env: {NCCL_NET_GDR_LEVEL: SYS, NCCL_ALGO: \"Ring,Tree\"}\n"
             "per_size: []\n");
  ProfileLocations locations;
  locations.profile_file = scratch.path() / "profile.yaml";
  locations.config = scratch.path() / "no-config.yaml";
  const JobEnv served = job_env({{"NCCLTUNE_NODES", "2"}, {"NCCLTUNE_GPUS_PER_NODE", "2"}}, locations,
                                NcclLibraryVersion{2, 28, 3}, ::geteuid());
  EXPECT_EQ(served.values.at("NCCL_NET_GDR_LEVEL"), "SYS");
  // Scoped to the tuned collectives, as `nccltune env` writes it for NCCL 2.24+.
  EXPECT_EQ(served.values.at("NCCL_ALGO"), "allreduce:Ring,Tree");
  EXPECT_EQ(served.values.size(), 2u);
}

// Only NCCLTUNE_DISABLE=1 turns the profile off, as in `nccltune env` and the TaskProlog; another
// value serves it and warns that it is not 1; 0 and "" serve it without a word.
TEST(JobEnv, OnlyDisableOneTurnsTheProfileOff) {
  TempDir scratch{"nccltune-job-env-disable"};
  write_file(scratch.path() / "profile.yaml",
             "schema: nccltune/profile/v1\n"
             "shape: {key: k, nodes: 2, gpus_per_node: 2, ranks: 4, nccl_version: \"2.28.9\"}\n"
             "env: {NCCL_NET_GDR_LEVEL: SYS}\n"
             "per_size: []\n");
  ProfileLocations locations;
  locations.profile_file = scratch.path() / "profile.yaml";
  locations.config = scratch.path() / "no-config.yaml";
  const auto served_with = [&](const std::string& off) {
    return job_env({{"NCCLTUNE_NODES", "2"}, {"NCCLTUNE_GPUS_PER_NODE", "2"}, {"NCCLTUNE_DISABLE", off}},
                   locations, NcclLibraryVersion{2, 28, 3}, ::geteuid());
  };
  EXPECT_TRUE(served_with("1").values.empty());
  const JobEnv yes = served_with("yes");
  EXPECT_EQ(yes.values.size(), 1u);
  ASSERT_FALSE(yes.log.empty());
  EXPECT_TRUE(yes.log.front().warning);
  EXPECT_EQ(yes.log.front().text,
            "NCCLTUNE_DISABLE='yes' is not 1, so the profile stays on (NCCLTUNE_DISABLE=1 turns it off)");
  for (const char* on : {"0", ""}) {
    const JobEnv served = served_with(on);
    EXPECT_EQ(served.values.size(), 1u) << on;
    for (const PluginLogLine& line : served.log) EXPECT_FALSE(line.warning) << line.text;
  }
}

}  // namespace
}  // namespace nccltune
