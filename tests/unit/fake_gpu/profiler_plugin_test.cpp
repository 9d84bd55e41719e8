// The fake NCCL's profiler plugin host (profiler_plugin_host.h, FIDELITY.md P1-P6): which table an
// NCCL version takes (src/plugin/profiler.cc: v5 at 2.28.9, v6 then v5 from 2.29.2), the events of
// each collective as NCCL gives them (group, collective with NCCL's names, kernel channels on the
// GPU timer), the activation mask's rules, commName from ncclConfig_t, and the ranks of a
// collective waiting for the last one to arrive (the late_rank fault). The test plugins
// (tests/fake-gpu/fake_test_profiler.cpp) write what they were given to files.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/nccl_library.h"
#include "fake_model_errors.h"
#include "fake_world.h"
#include "nccl_config.h"
#include "nccl_debug.h"
#include "profiler_plugin_host.h"
#include "test_files.h"

namespace {
namespace profiler_test {

using namespace nccltune;
using namespace nccltune::fake;
using nccltune::test_support::fake_model_error;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

std::string plugin_path(const char* name) {
  return (std::filesystem::path(NCCLTUNE_FAKENCCL).parent_path() / name).string();
}

struct Opened {
  int abi_version = 0;  // 0: no plugin
  std::string log;
  std::string calls;  // what the plugin wrote
};

// One communicator's open of `name` (nullopt: NCCL_PROFILER_PLUGIN unset) under an NCCL of
// `nccl_version`, closed again.
Opened open_plugin(const std::optional<std::string>& name, int nccl_version) {
  TempDir scratch("nccltune-profiler-host");
  setenv("FAKE_TEST_PROFILER_OUT", (scratch / "calls").c_str(), 1);
  DebugSettings settings;
  settings.info = true;
  settings.subsystems = kSubsysAll;
  settings.file = (scratch / "nccl.log").string();
  Opened opened;
  {
    DebugLog log(settings, "host", 0);
    std::unique_ptr<ProfilerPluginHost> host =
        ProfilerPluginHost::open(name, nccl_version, ProfiledComm{42, "rail 3", 2, 16, 5}, log);
    if (host) opened.abi_version = host->abi_version();
  }
  unsetenv("FAKE_TEST_PROFILER_OUT");
  opened.log = read_file(scratch / "nccl.log");
  if (std::filesystem::exists(scratch / "calls.rail 3.5")) opened.calls = read_file(scratch / "calls.rail 3.5");
  return opened;
}

TEST(FakeProfilerPluginHost, EachNcclVersionTakesTheTableItLooksFor) {
  const std::string both = plugin_path("libfake_test_profiler_v6.so");
  const std::string v5_only = plugin_path("libfake_test_profiler.so");
  // 2.28.9 knows no v6: it takes v5 of a plugin that has both.
  Opened old_nccl = open_plugin(both, 22809);
  EXPECT_EQ(old_nccl.abi_version, 5);
  EXPECT_NE(old_nccl.log.find("PROFILER/Plugin: Loaded fake_test_v5 (v5)"), std::string::npos) << old_nccl.log;
  EXPECT_NE(old_nccl.log.find("Successfully loaded external profiler plugin " + both), std::string::npos);
  EXPECT_EQ(old_nccl.calls, "init fake_test_v5 hash=42 name=rail 3 nodes=2 ranks=16 rank=5\nfinalize\n");
  // 2.29.2 and later look for v6 first, and fall back to v5.
  for (const int version : {22902, 23007}) {
    Opened newer = open_plugin(both, version);
    EXPECT_EQ(newer.abi_version, 6) << version;
    EXPECT_EQ(newer.calls, "init fake_test_v6 hash=42 name=rail 3 nodes=2 ranks=16 rank=5\nfinalize\n");
    EXPECT_EQ(open_plugin(v5_only, version).abi_version, 5) << version;
  }
}

TEST(FakeProfilerPluginHost, NoneUnsetAndMissingLoadNothing) {
  const Opened none = open_plugin(std::string("none"), 23007);
  EXPECT_EQ(none.abi_version, 0);
  EXPECT_NE(none.log.find("NCCL_PROFILER_PLUGIN set by environment to none"), std::string::npos);
  EXPECT_EQ(none.log.find("PROFILER/Plugin: Could not find"), std::string::npos);
  // Unset: NCCL looks for libnccl-profiler.so on the library path; a bare name X is also tried as
  // libnccl-profiler-X.so.
  const Opened unset = open_plugin(std::nullopt, 23007);
  EXPECT_EQ(unset.abi_version, 0);
  EXPECT_NE(unset.log.find("PROFILER/Plugin: Could not find: libnccl-profiler.so"), std::string::npos) << unset.log;
  const Opened bare = open_plugin(std::string("inspector"), 23007);
  EXPECT_NE(bare.log.find("Could not find: inspector libnccl-profiler-inspector.so"), std::string::npos) << bare.log;
}

TEST(FakeProfilerPluginHost, NcclsNamesOfTypesAlgorithmsAndProtocols) {
  EXPECT_STREQ(nccl_datatype_name(nccl_abi::ncclFloat32), "ncclFloat32");
  EXPECT_STREQ(nccl_datatype_name(nccl_abi::ncclBfloat16), "ncclBfloat16");
  EXPECT_STREQ(nccl_datatype_name(nccl_abi::ncclUint8), "Unknown");  // ncclDatatypeToString has no case
  EXPECT_STREQ(nccl_algo_name("NVLSTree"), "NVLS_TREE");
  EXPECT_STREQ(nccl_algo_name("CollNetDirect"), "COLLNET_DIRECT");
  EXPECT_STREQ(nccl_proto_name("Simple"), "SIMPLE");
  EXPECT_STREQ(nccl_proto_name("LL128"), "LL128");
  EXPECT_EQ(nccl_warps("Ring", "Simple"), 17);  // 512 threads and the sync warp
  EXPECT_EQ(nccl_warps("Ring", "LL"), 16);
  EXPECT_EQ(nccl_warps("Tree", "LL"), 20);  // Tree uses all 640 threads
  EXPECT_EQ(gpu_timer_ns(2.5) - gpu_timer_ns(0), 2500u);
  EXPECT_GT(gpu_timer_ns(0), 0u);  // a plugin reads 0 as "no timestamp"
}

TEST(FakeProfilerPluginHost, ConfigCommNameAsParseCommConfigReadsIt) {
  NcclConfig config;
  config.commName = "node 1";
  EXPECT_EQ(config_comm_name(&config), "node 1");
  config.commName = nullptr;
  EXPECT_EQ(config_comm_name(&config), "");
  NcclConfig older;  // a config from an NCCL whose ncclConfig_t ends before commName
  older.commName = "ignored";
  older.size = offsetof(NcclConfig, commName);
  EXPECT_EQ(config_comm_name(&older), "");
  NcclConfig stray;
  stray.magic = 0;
  EXPECT_EQ(config_comm_name(&stray), std::nullopt);
}

TEST(FakeProfilerPluginHost, LateRankIsParsedStrictly) {
  const std::string head = "schema: nccltune/fake-model/v1\nalgos: {Ring: {Simple: {lat_us: 10, busbw_gbps: 40}}}\n";
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: late_rank, rank: 3, delay_us: 200}]\n"), "(parsed)");
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: late_rank, node: 1, delay_us: 0.5}]\n"), "(parsed)");
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: late_rank, rank: 3}]\n"),
            "model.yaml:3: faults[0].delay_us: missing");
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: late_rank, delay_us: 20}]\n"),
            "model.yaml:3: faults[0]: late_rank names one 'rank' or one 'node'");
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: late_rank, rank: 1, node: 0, delay_us: 20}]\n"),
            "model.yaml:3: faults[0]: late_rank names one 'rank' or one 'node'");
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: late_rank, rank: 1, delay_us: -3}]\n"),
            "model.yaml:3: faults[0].delay_us: must be above 0");
  EXPECT_EQ(fake_model_error(head + "faults: [{fault: slow_rank, rank: 1, delay_us: 3}]\n"),
            "model.yaml:3: faults[0].delay_us: only late_rank takes delay_us");
}

// What one rank's plugin saw of its communicator, parsed.
struct Collective {
  std::string line;  // the "coll ..." line
  int channels = 0;
  std::vector<std::uint64_t> starts, stops;  // per kernel channel
  bool group = false;                         // inside a group event
};

struct Seen {
  std::string init;
  std::vector<Collective> collectives;
  bool finalized = false;
  std::string text;
};

std::uint64_t number_after(const std::string& line, const std::string& key) {
  const std::size_t at = line.find(key + "=");
  return at == std::string::npos ? 0 : std::stoull(line.substr(at + key.size() + 1));
}

Seen parse_calls(const std::string& text) {
  Seen seen;
  seen.text = text;
  std::istringstream lines(text);
  bool in_group = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("init ")) seen.init = line;
    if (line == "group") in_group = true;
    if (line == "stop group") in_group = false;
    if (line.starts_with("coll ")) {
      seen.collectives.push_back(Collective{line, static_cast<int>(number_after(line, "channels")), {}, {}, in_group});
    }
    if (line.starts_with("kernel ch=") && !seen.collectives.empty()) {
      EXPECT_NE(line.find("parent=yes"), std::string::npos) << line;
      seen.collectives.back().starts.push_back(number_after(line, "start"));
    }
    if (line.starts_with("kernel-stop ") && !seen.collectives.empty())
      seen.collectives.back().stops.push_back(number_after(line, "stop"));
    if (line == "finalize") seen.finalized = true;
  }
  return seen;
}

// Two ranks, each: a world communicator, two all_reduce of 1 MiB of float32 back to back, then
// `extra` (may be empty), destroy. Returns each rank's plugin calls for the world communicator.
std::vector<Seen> run_two_ranks(const std::string& model_text, const fake_world::Env& extra_env,
                                const std::function<void(fake_world::World&, const NcclComm&)>& extra = {}) {
  TempDir dir("nccltune-profiler-world");
  write_file(dir / "model.yaml", model_text);
  fake_world::Env env = {{"NCCLTUNE_FAKE_MODEL", (dir / "model.yaml").string()},
                         {"NCCLTUNE_FAKE_TIMEOUT_S", "20"},
                         {"NCCL_PROFILER_PLUGIN", plugin_path("libfake_test_profiler.so")},
                         {"FAKE_TEST_PROFILER_OUT", (dir / "calls").string()}};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  const fake_world::Outcome outcome = fake_world::run_world(2, env, [&](fake_world::World& w) {
    Result<NcclComm> comm = w.init();
    if (!comm) {
      w.report << "init-error " << comm.error();
      return;
    }
    Result<DeviceBuffer> buffer = w.cuda.allocate(1 << 20);
    if (!buffer) return;
    for (int i = 0; i < 2; ++i) {
      Status ran = w.nccl.check(w.nccl.api().ncclAllReduce(buffer->data(), buffer->data(), (1 << 20) / 4,
                                                           nccl_abi::ncclFloat32, nccl_abi::ncclSum, comm->get(),
                                                           w.stream.get()),
                                "ncclAllReduce");
      if (!ran) w.report << ran.error();
    }
    if (extra) extra(w, *comm);
  });
  std::vector<Seen> seen;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(fake_world::exited_cleanly(outcome.statuses[static_cast<std::size_t>(rank)])) << rank;
    EXPECT_EQ(outcome.reports[static_cast<std::size_t>(rank)], "") << rank;
    const auto file = dir / ("calls.comm." + std::to_string(rank));
    seen.push_back(parse_calls(std::filesystem::exists(file) ? read_file(file) : ""));
  }
  return seen;
}

std::string exact_model() {
  return read_file(fixture("models/exact.yaml"));
}

TEST(FakeProfilerPluginHost, EachCollectiveGivesNcclsEventsWithTheModelsTimes) {
  const std::vector<Seen> ranks = run_two_ranks(exact_model(), {});
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    const Seen& seen = ranks[static_cast<std::size_t>(rank)];
    EXPECT_EQ(seen.init,
              "init fake_test_v5 hash=" + std::to_string(number_after(seen.init, "hash")) +
                  " name=(null) nodes=1 ranks=2 rank=" + std::to_string(rank));
    ASSERT_EQ(seen.collectives.size(), 2u) << seen.text;
    for (std::size_t i = 0; i < 2; ++i) {
      const Collective& c = seen.collectives[i];
      // 1 MiB on exact.yaml's defaults: Ring/LL128 (up to 16 MiB), 16 channels, 640 threads.
      EXPECT_EQ(c.line, "coll func=AllReduce seq=" + std::to_string(i) +
                            " count=262144 type=ncclFloat32 root=0 algo=RING proto=LL128 channels=16 warps=20 rank=" +
                            std::to_string(rank) + " group=yes");
      EXPECT_TRUE(c.group);
      ASSERT_EQ(c.starts.size(), 16u);
      ASSERT_EQ(c.stops.size(), 16u);
      // The model's time: Ring/LL128 at 1 MiB on 2 ranks, 16 + 1 MiB / 300 GB/s * 2(n-1)/n us.
      const double expected_us = 16 + (1 << 20) / 300e3;
      EXPECT_NEAR(static_cast<double>(c.stops[0] - c.starts[0]) / 1000, expected_us, 0.01);
    }
    // Back to back on the stream: the second starts where the first stopped.
    EXPECT_EQ(seen.collectives[1].starts[0], seen.collectives[0].stops[0]);
    EXPECT_TRUE(seen.finalized);
  }
  // The ranks end each collective together.
  EXPECT_EQ(ranks[0].collectives[1].stops[0] - ranks[0].collectives[0].starts[0],
            ranks[1].collectives[1].stops[0] - ranks[1].collectives[0].starts[0]);
}

TEST(FakeProfilerPluginHost, TheOthersWaitForALateRank) {
  const std::vector<Seen> ranks =
      run_two_ranks(exact_model() + "faults: [{fault: late_rank, rank: 1, delay_us: 250}]\n", {});
  ASSERT_EQ(ranks[0].collectives.size(), 2u);
  ASSERT_EQ(ranks[1].collectives.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto exec = [&](int rank) {
      const Collective& c = ranks[static_cast<std::size_t>(rank)].collectives[i];
      return static_cast<std::int64_t>(c.stops[0] - c.starts[0]);
    };
    // Rank 0 waits the 250 us rank 1 is late, at every collective; rank 1 runs the op alone.
    EXPECT_EQ(exec(0) - exec(1), 250000) << i;
  }
}

TEST(FakeProfilerPluginHost, TheMaskDecidesTheEventsAsNcclDoes) {
  // Collectives only: NCCL still opens the group (ncclProfilerStartGroupEvent asks for any of
  // group, collective, p2p, proxy, kernel channel or net events), but no kernel channel.
  const std::vector<Seen> colls = run_two_ranks(exact_model(), {{"FAKE_TEST_PROFILER_MASK", "2"}});
  ASSERT_EQ(colls[0].collectives.size(), 2u) << colls[0].text;
  EXPECT_TRUE(colls[0].collectives[0].group);
  EXPECT_TRUE(colls[0].collectives[0].starts.empty());
  // Group events only: no collective, no channel.
  const std::vector<Seen> groups = run_two_ranks(exact_model(), {{"FAKE_TEST_PROFILER_MASK", "1"}});
  EXPECT_TRUE(groups[0].collectives.empty()) << groups[0].text;
  EXPECT_NE(groups[0].text.find("group\nstop group\n"), std::string::npos) << groups[0].text;
}

TEST(FakeProfilerPluginHost, SplitsAreNamedByTheirConfig) {
  TempDir dir("nccltune-profiler-split");
  const fake_world::Env env = {{"NCCLTUNE_FAKE_MODEL", fixture("models/exact.yaml").string()},
                               {"NCCLTUNE_FAKE_TIMEOUT_S", "20"},
                               {"NCCL_PROFILER_PLUGIN", plugin_path("libfake_test_profiler.so")},
                               {"FAKE_TEST_PROFILER_OUT", (dir / "calls").string()}};
  const fake_world::Outcome outcome = fake_world::run_world(2, env, [&](fake_world::World& w) {
    Result<NcclComm> root = w.init();
    if (!root) return;
    const NcclApi& api = w.nccl.api();
    NcclConfig config;
    config.commName = "rail 0";
    nccl_abi::ncclComm_t named = nullptr, inherited = nullptr;
    w.report << api.ncclCommSplit(root->get(), 0, w.rank, &named, reinterpret_cast<nccl_abi::ncclConfig_t*>(&config))
             << " ";
    // A split of a named communicator with no config inherits the name (copyCommConfig).
    w.report << api.ncclCommSplit(named, 0, w.rank, &inherited, nullptr) << " ";
    NcclConfig stray;
    stray.magic = 1;
    nccl_abi::ncclComm_t refused = nullptr;
    w.report << api.ncclCommSplit(root->get(), 0, w.rank, &refused, reinterpret_cast<nccl_abi::ncclConfig_t*>(&stray));
    api.ncclCommDestroy(inherited);
    api.ncclCommDestroy(named);
  });
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(fake_world::exited_cleanly(outcome.statuses[static_cast<std::size_t>(rank)]));
    EXPECT_EQ(outcome.reports[static_cast<std::size_t>(rank)], "0 0 4");  // ncclInvalidArgument
    const std::string calls = read_file(dir / ("calls.rail 0." + std::to_string(rank)));
    EXPECT_NE(calls.find("name=rail 0 nodes=1 ranks=2 rank=" + std::to_string(rank)), std::string::npos) << calls;
    // Two communicators named "rail 0" wrote there: the split and its own split.
    std::size_t inits = 0;
    for (std::size_t at = calls.find("init "); at != std::string::npos; at = calls.find("init ", at + 1)) ++inits;
    EXPECT_EQ(inits, 2u) << calls;
    EXPECT_TRUE(std::filesystem::exists(dir / ("calls.comm." + std::to_string(rank))));  // the root: no name
  }
}

}  // namespace profiler_test
}  // namespace
