// Which table the fake NCCL takes from a tuner plugin, by the NCCL version its model claims, as
// NCCL's ncclTunerPluginLoad (src/plugin/tuner.cc) of that version looks them up: 2.28.9 tries v5
// then v4 (it knows no v6 or v7), 2.30.3 v6 first, 2.32.6 v7 first, each falling back to the
// older ones (FIDELITY.md F11). The built libnccl-tuner-nccltune.so, which exports v4 to v7, is
// loaded through the fake's host and answers a cost table through the table it was given.
#include "tuner_plugin_host.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "nccl_debug.h"
#include "nccl_tuner_abi.h"
#include "test_files.h"

namespace {
namespace host_test {

using namespace nccltune::fake;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

// One communicator's load of `plugin` under an NCCL of `nccl_version`: the table's version, the
// INFO lines NCCL prints about it, and what the plugin made of an all_reduce of 64 KiB.
struct Loaded {
  int abi_version = 0;
  std::string log;
  CostTable table{};
  int channels = 0;
};

Loaded load(const std::string& plugin, int nccl_version) {
  TempDir scratch("nccltune-tuner-host");
  write_file(scratch / "empty-config.yaml", "");
  // nccltune's plugin reads its profile from here, and nothing of this machine's.
  setenv("NCCLTUNE_CONFIG", (scratch / "empty-config.yaml").c_str(), 1);
  setenv("NCCLTUNE_NODE_STATE", (scratch / "no-node.yaml").c_str(), 1);
  setenv("NCCLTUNE_PROFILE", fixture("plugin/h100-2n.yaml").c_str(), 1);
  Loaded loaded;
  DebugSettings settings;
  settings.info = true;
  settings.subsystems = kSubsysAll;
  settings.file = (scratch / "nccl.log").string();
  {
    DebugLog log(settings, "host", 0);
    TunerPluginHost::Opened opened = TunerPluginHost::open(plugin, nccl_version, 42, 16, 2, log);
    EXPECT_FALSE(opened.init_failed);
    if (opened.host) {
      loaded.abi_version = opened.host->abi_version();
      for (auto& row : loaded.table) row.fill(100.0f);
      EXPECT_EQ(opened.host->get_coll_info(tuner_abi::kFuncAllReduce, 65536, loaded.table, loaded.channels),
                nccltune::nccl_abi::ncclSuccess);
    }
  }
  loaded.log = read_file(scratch / "nccl.log");
  for (const char* name : {"NCCLTUNE_CONFIG", "NCCLTUNE_NODE_STATE", "NCCLTUNE_PROFILE"}) unsetenv(name);
  return loaded;
}

std::size_t using_lines(const std::string& log) {
  std::size_t count = 0;
  for (std::size_t at = log.find("TUNER/Plugin: Using "); at != std::string::npos;
       at = log.find("TUNER/Plugin: Using ", at + 1))
    ++count;
  return count;
}

TEST(FakeTunerPluginHost, EachNcclVersionTakesTheNewestTableItKnows) {
  struct Case {
    int nccl_version;
    int table;
  };
  for (const Case expected : {Case{22809, 5}, Case{23003, 6}, Case{23205, 6}, Case{23206, 7}}) {
    SCOPED_TRACE(expected.nccl_version);
    const Loaded loaded = load(NCCLTUNE_TUNER_PLUGIN, expected.nccl_version);
    EXPECT_EQ(loaded.abi_version, expected.table);
    EXPECT_NE(loaded.log.find("TUNER/Plugin: Using nccltune (v" + std::to_string(expected.table) + ")"),
              std::string::npos)
        << loaded.log;
    EXPECT_EQ(using_lines(loaded.log), 1u) << loaded.log;
    // Through whichever table: h100-2n.yaml's Ring/LL128 with 24 channels at 64 KiB.
    EXPECT_EQ(loaded.table[1][1], 0.0f);  // NCCL_ALGO_RING, NCCL_PROTO_LL128
    EXPECT_EQ(loaded.channels, 24);
  }
}

// A plugin with v5 only (libfake_test_tuner.so) under NCCL 2.32.6: v7 and v6 are not found, and
// NCCL goes on down its list to v5.
TEST(FakeTunerPluginHost, ANewNcclFallsBackToAnOlderTable) {
  const std::string v5_only =
      (std::filesystem::path(NCCLTUNE_FAKENCCL).parent_path() / "libfake_test_tuner.so").string();
  const Loaded loaded = load(v5_only, 23206);
  EXPECT_EQ(loaded.abi_version, 5);
  EXPECT_NE(loaded.log.find("TUNER/Plugin: Using fake_test (v5)"), std::string::npos) << loaded.log;
  EXPECT_EQ(using_lines(loaded.log), 1u) << loaded.log;
}

}  // namespace host_test
}  // namespace
