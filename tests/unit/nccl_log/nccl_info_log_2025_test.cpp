// NCCL INFO logs of 2025-26 (NCCL 2.26 to 2.30, aws-ofi-nccl 1.16 to 1.18) read as a careful reader
// reads them: what NCCL and its plugins say, not what a variable's name or a configured value
// suggests.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

NcclInfoLog read_2025_log(const std::string& name) {
  const std::filesystem::path path = fixture("nccl-info-logs/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return parse_nccl_info_log(read_file(path), name);
}

std::vector<LogVerdict> verdicts_named(const std::vector<LogVerdict>& verdicts, const std::string& check) {
  std::vector<LogVerdict> found;
  for (const LogVerdict& v : verdicts)
    if (v.check == check) found.push_back(v);
  return found;
}

}  // namespace

TEST(NcclInfoLog2025, ConfiguredTimeoutIsNotATimeout) {
  const NcclInfoLog log = read_2025_log("nccl-1814-ib-timeout-set-by-environment.txt");
  EXPECT_EQ(log.env.at("NCCL_IB_TIMEOUT"), "18");
  EXPECT_TRUE(log.failures.empty());
  const auto verdicts = explain_nccl_log(log, nullptr);
  EXPECT_TRUE(verdicts_named(verdicts, "timeout").empty());
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 0);  // a healthy run's settings pass
}

TEST(NcclInfoLog2025, TimeoutOnlyFromTheWordsOfARealOne) {
  const NcclInfoLog log = read_2025_log("synthetic-2.30-timeouts-configured-and-real.txt");
  std::vector<int> timeout_lines;
  int completions = 0;
  for (const NcclFailure& f : log.failures) {
    if (f.kind == NcclFailureKind::timeout) timeout_lines.push_back(f.where.line);
    if (f.kind == NcclFailureKind::ib_completion) ++completions;
  }
  // Not NCCL_IB_TIMEOUT's value (line 4), not "NCCL EP: using timeout=..." (5), not the HINT lines
  // that name NCCL_IB_TIMEOUT after a completion error (7-10): nccl-tests' -T (11) and the watchdog (12).
  EXPECT_EQ(timeout_lines, (std::vector<int>{11, 12}));
  EXPECT_EQ(completions, 1);
  const auto timeouts = verdicts_named(explain_nccl_log(log, nullptr), "timeout");
  ASSERT_EQ(timeouts.size(), 1u);
  EXPECT_NE(timeouts[0].message.find("2 time(s)"), std::string::npos) << timeouts[0].message;
}

TEST(NcclInfoLog2025, PluginForcedProtocolIsInfoAttributedToThePlugin) {
  const NcclInfoLog log = read_2025_log("aws-ofi-nccl-1.18-g7e-efa-2.29.2-plugin-forced-simple.txt");
  EXPECT_EQ(log.env.at("NCCL_PROTO"), "simple");
  EXPECT_EQ(log.plugin_env.at("NCCL_PROTO"), "simple");
  EXPECT_EQ(log.plugin_proto_reason, "GDR not supported");
  EXPECT_EQ(log.cuda_driver, "12.8");
  EXPECT_EQ(log.transport, "OFI");
  const auto env = verdicts_named(explain_nccl_log(log, nullptr), "env");
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].level, LogVerdictLevel::info);
  EXPECT_NE(env[0].message.find("set by the net plugin (aws-ofi-nccl), because GDR not supported"),
            std::string::npos)
      << env[0].message;
}

TEST(NcclInfoLog2025, UsersProtocolIsStillAWarning) {
  // The plugin set simple; the user's NCCL_PROTO (which the plugin leaves alone) is the user's.
  const NcclInfoLog log = parse_nccl_info_log(
      "h:1:2 [0] NCCL INFO NET/OFI Adding NCCL_PROTO=simple to environment\n"
      "h:1:2 [0] NCCL INFO NCCL_PROTO set by environment to LL128\n",
      "mixed");
  const auto env = verdicts_named(explain_nccl_log(log, nullptr), "env");
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].level, LogVerdictLevel::warn);
}

TEST(NcclInfoLog2025, FallenBackTunerIsNcclsOwn) {
  const NcclInfoLog log = read_2025_log("aws-ofi-nccl-1.18-g7e-efa-2.29.2-plugin-forced-simple.txt");
  EXPECT_EQ(log.tuner_loaded, "nccl_ofi_tuner");
  ASSERT_TRUE(log.tuner_declined);
  EXPECT_NE(log.tuner_declined->find("not available for platform : g7e.8xlarge"), std::string::npos);
  EXPECT_EQ(tuner_in_effect(log), "internal");
  const auto tuner = verdicts_named(explain_nccl_log(log, nullptr), "tuner");
  ASSERT_EQ(tuner.size(), 1u);
  EXPECT_EQ(tuner[0].level, LogVerdictLevel::info);
  EXPECT_NE(tuner[0].message.find("fell back to NCCL's tuner"), std::string::npos) << tuner[0].message;
  EXPECT_EQ(tuner[0].message.find("take precedence"), std::string::npos) << tuner[0].message;
  // The plugin's own NCCL_TUNER_PLUGIN=libnccl-net.so is not a user's request.
  const std::string text = render_nccl_log_text(log, explain_nccl_log(log, nullptr));
  EXPECT_NE(text.find("tuner     internal (nccl_ofi_tuner fell back)"), std::string::npos) << text;
  const nlohmann::ordered_json json = nccl_info_log_to_json(log);
  EXPECT_EQ(json["tuner"]["in_effect"], "internal");
  EXPECT_EQ(json["tuner"]["loaded"], "nccl_ofi_tuner");  // the existing field keeps its meaning
}

TEST(NcclInfoLog2025, AskedForTunerNotFoundWarns228) {
  const NcclInfoLog log = read_2025_log("synthetic-2.28-tuner-plugin-not-found.txt");
  EXPECT_TRUE(log.tuner_not_found);
  EXPECT_FALSE(log.tuner_loaded);
  EXPECT_EQ(tuner_in_effect(log), "internal");
  const auto tuner = verdicts_named(explain_nccl_log(log, nullptr), "tuner");
  ASSERT_EQ(tuner.size(), 1u);
  EXPECT_EQ(tuner[0].level, LogVerdictLevel::warn);
  EXPECT_NE(tuner[0].message.find("tuner plugin nccltune was asked for but NCCL fell back"), std::string::npos)
      << tuner[0].message;
}

TEST(NcclInfoLog2025, AskedForTunerNotFoundWarns227) {
  // 2.26 and 2.27 print no NCCL_TUNER_PLUGIN line: the name NCCL tried is the request.
  const NcclInfoLog log = read_2025_log("synthetic-2.27-tuner-plugin-not-found.txt");
  EXPECT_EQ(log.tuner_requested, "libnccl-tuner-nccltune.so");
  const auto tuner = verdicts_named(explain_nccl_log(log, nullptr), "tuner");
  ASSERT_EQ(tuner.size(), 1u);
  EXPECT_EQ(tuner[0].level, LogVerdictLevel::warn);
}

TEST(NcclInfoLog2025, PluginNameSetByEnvForATunerThatLoaded) {
  const NcclInfoLog log = read_2025_log("nvidia-blog-2025-example-tuner-plugin-2.2x.txt");
  EXPECT_EQ(log.tuner_library_from_env, "libnccl-tuner-example.so");
  EXPECT_EQ(log.tuner_loaded, "Example");
  EXPECT_TRUE(log.tuner_initialized);  // "Initializing tuner for 4 nodes, 32 ranks"
  EXPECT_EQ(log.nodes, 4);
  EXPECT_EQ(log.ranks, 32);
  const auto tuner = verdicts_named(explain_nccl_log(log, nullptr), "tuner");
  ASSERT_EQ(tuner.size(), 1u);
  EXPECT_EQ(tuner[0].level, LogVerdictLevel::info);
}

TEST(NcclInfoLog2025, NetPluginProbedForATunerIsNoRequest) {
  const NcclInfoLog log = read_2025_log("uccl-172-net-plugin-probed-for-tuner.txt");
  EXPECT_EQ(log.tuner_library_from_env, "/workspace/uccl/rdma/libnccl-net-uccl.so");
  const auto tuner = verdicts_named(explain_nccl_log(log, nullptr), "tuner");
  ASSERT_EQ(tuner.size(), 1u);
  EXPECT_EQ(tuner[0].level, LogVerdictLevel::info);
  // The same words for a tuner library named by NCCL_TUNER_PLUGIN: asked for, and it fell back.
  const NcclInfoLog asked = parse_nccl_info_log(
      "h:1:2 [0] NCCL INFO TUNER/Plugin: Plugin name set by env to /opt/aws-ofi-nccl/lib/libnccl-ofi-tuner.so\n"
      "h:1:2 [0] NCCL INFO TUNER/Plugin: Failed to find ncclTunerPlugin_v3 symbol.\n"
      "h:1:2 [0] NCCL INFO TUNER/Plugin: Failed to find ncclTunerPlugin_v2 symbol, using internal tuner instead.\n",
      "asked");
  const auto warned = verdicts_named(explain_nccl_log(asked, nullptr), "tuner");
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0].level, LogVerdictLevel::warn);
  EXPECT_NE(warned[0].message.find("libnccl-ofi-tuner.so was asked for"), std::string::npos) << warned[0].message;
}

TEST(NcclInfoLog2025, LogWithoutInfoLinesWarnsWhateverVersionItHas) {
  const NcclInfoLog log = read_2025_log("nccl-info-free-oci-b4-2.29.3-version-only.txt");
  EXPECT_EQ(log.nccl_version, "2.29.3");
  EXPECT_EQ(log.info_lines, 0);
  const auto verdicts = explain_nccl_log(log, nullptr);
  const auto warned = verdicts_named(verdicts, "log");
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0].level, LogVerdictLevel::warn);
  EXPECT_NE(warned[0].message.find("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING"), std::string::npos);
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 1);
  // A log with NCCL's account has no such warning.
  const NcclInfoLog with_info = read_2025_log("nccl-1814-ib-timeout-set-by-environment.txt");
  EXPECT_GT(with_info.info_lines, 0);
  EXPECT_TRUE(verdicts_named(explain_nccl_log(with_info, nullptr), "log").empty());
}

TEST(NcclInfoLog2025, NvlsOffWhereNcclAlgoLeavesItOut) {
  const NcclInfoLog log = read_2025_log("synthetic-2.28-nccl-algo-ring-nvls-available.txt");
  EXPECT_EQ(log.nvls_available, true);
  EXPECT_EQ(log.nvls_channels, 16);
  EXPECT_EQ(log.nvls_in_enabled_matrix, false);
  EXPECT_EQ(nvls_enabled(log), false);
  const auto nvls = verdicts_named(explain_nccl_log(log, nullptr), "nvls");
  ASSERT_EQ(nvls.size(), 1u);
  EXPECT_EQ(nvls[0].message.find("NVLS on"), std::string::npos) << nvls[0].message;
  EXPECT_NE(nvls[0].message.find("NVLS is off: NCCL_ALGO=RING leaves it out"), std::string::npos) << nvls[0].message;
  EXPECT_EQ(nccl_info_log_to_json(log)["nvls"]["enabled"], false);
  // The plugin log's matrix restricts only the protocol: NVLS stays enabled there.
  EXPECT_EQ(read_2025_log("aws-ofi-nccl-1.18-g7e-efa-2.29.2-plugin-forced-simple.txt").nvls_in_enabled_matrix,
            true);
  // Without the matrix, an NCCL_ALGO list that names algorithms says it; exclusions are left unknown.
  EXPECT_EQ(nvls_enabled(parse_nccl_info_log("h:1:2 [0] NCCL INFO NCCL_ALGO set by environment to ring,tree\n", "a")),
            false);
  EXPECT_EQ(nvls_enabled(parse_nccl_info_log("h:1:2 [0] NCCL INFO NCCL_ALGO set by environment to Ring,NVLS\n", "b")),
            true);
  EXPECT_EQ(nvls_enabled(parse_nccl_info_log("h:1:2 [0] NCCL INFO NCCL_ALGO set by environment to ^NVLS\n", "c")),
            std::nullopt);
}

TEST(NcclInfoLog2025, GdrAdviceNamesTheCauseTheLogStates) {
  const NcclInfoLog log = read_2025_log("aws-ofi-nccl-1.18-g7e-efa-2.29.2-plugin-forced-simple.txt");
  ASSERT_EQ(log.gdr_causes.size(), 1u);  // the same words on both ranks are one cause
  EXPECT_EQ(log.gdr_causes[0].text, "NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR");
  const auto gdr = verdicts_named(explain_nccl_log(log, nullptr), "gdr");
  ASSERT_EQ(gdr.size(), 1u);
  EXPECT_NE(gdr[0].message.find("off on all 8 network connections"), std::string::npos) << gdr[0].message;
  EXPECT_NE(gdr[0].message.find("the log says why"), std::string::npos) << gdr[0].message;
  EXPECT_NE(gdr[0].message.find("disabling GDR"), std::string::npos) << gdr[0].message;
  EXPECT_EQ(gdr[0].message.find("nvidia-peermem"), std::string::npos) << gdr[0].message;
  // NCCL's own words for a device that takes no GPU memory point at peermem and DMA-BUF.
  const NcclInfoLog hca = parse_nccl_info_log(
      "h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n",
      "hca");
  const auto hca_gdr = verdicts_named(explain_nccl_log(hca, nullptr), "gdr");
  ASSERT_EQ(hca_gdr.size(), 1u);
  EXPECT_NE(hca_gdr[0].message.find("GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"), std::string::npos);
  EXPECT_NE(hca_gdr[0].message.find("nvidia-peermem"), std::string::npos);
}
