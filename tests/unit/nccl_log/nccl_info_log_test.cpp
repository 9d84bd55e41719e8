#include "collectives/nccl_info_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "collectives/nccl_info_mnnvl.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

NcclInfoLog read_log(const std::string& name) {
  const std::filesystem::path path = fixture("nccl-info-logs/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return parse_nccl_info_log(read_file(path), name);
}

const LogVerdict* find_verdict(const std::vector<LogVerdict>& verdicts, const std::string& check) {
  for (const LogVerdict& v : verdicts)
    if (v.check == check) return &v;
  return nullptr;
}

std::vector<std::string> device_names(const NcclInfoLog& log) {
  std::vector<std::string> names;
  for (const NcclNetDevice& d : log.devices) names.push_back(d.name);
  return names;
}

TEST(NcclInfoLog, OfiPluginOnP4dWithTimestampLinesBetween) {
  const NcclInfoLog log = read_log("aws-ofi-nccl-715-p4d-efa-ofi-1.11.0.txt");
  EXPECT_FALSE(log.nccl_version);  // the excerpt does not show it
  EXPECT_EQ(log.transport, "OFI");
  EXPECT_FALSE(log.net_plugin);
  EXPECT_TRUE(log.devices.empty());
  EXPECT_EQ(log.hosts, std::vector<std::string>{"algo-1"});
  EXPECT_EQ(log.nvls_available, false);
  EXPECT_EQ(log.env.at("NCCL_NVLS_CHUNKSIZE"), "512KiB");
  EXPECT_EQ(log.env.at("NCCL_NVLSTREE_MAX_CHUNKSIZE"), "512KiB");
  EXPECT_EQ(log.net_connections, 0);
  EXPECT_TRUE(log.warnings.empty());
  EXPECT_FALSE(log.ranks);
  const auto verdicts = explain_nccl_log(log, nullptr);
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 0);
}

TEST(NcclInfoLog, RoceSingleHca218) {
  const NcclInfoLog log = read_log("nccl-1052-h800-2node-roce-1hca-2.18.5.txt");
  EXPECT_EQ(log.nccl_version, "2.18.5");
  EXPECT_EQ(log.cuda_version, "12.0");
  EXPECT_EQ(log.net_plugin, "IB");
  EXPECT_EQ(log.transport, "RoCE");
  ASSERT_EQ(log.devices.size(), 1u);
  EXPECT_EQ(log.devices[0], (NcclNetDevice{"mlx5_4", 1, "RoCE", false}));
  EXPECT_EQ(log.env.at("NCCL_IB_HCA"), "mlx5_4");
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"node2", "node4"}));
  EXPECT_FALSE(log.ranks);  // one "# Rank" line is not the whole list
  EXPECT_FALSE(log.nodes);
  EXPECT_TRUE(log.warnings.empty());  // the WARN quoted in the header is not the log's
  EXPECT_TRUE(log.failures.empty());
}

TEST(NcclInfoLog, CompletionErrorStatus12) {
  const NcclInfoLog log = read_log("nccl-1405-roce-ipv6-completion-error-status12.txt");
  ASSERT_EQ(log.warnings.size(), 3u);
  EXPECT_EQ(log.warnings[0].line, 4);
  EXPECT_TRUE(log.warnings[0].text.starts_with(
      "NET/IB : Got completion from peer 10.216.210.236<54862> with status=12"));
  ASSERT_EQ(log.failures.size(), 3u);
  EXPECT_EQ(log.failures[0].status, 12);
  EXPECT_EQ(log.hosts, std::vector<std::string>{"kp-ddp-worker-0"});
  const auto verdicts = explain_nccl_log(log, nullptr);
  const LogVerdict* v = find_verdict(verdicts, "ib_completion");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->level, LogVerdictLevel::fail);
  EXPECT_NE(v->message.find("status 12"), std::string::npos);
  EXPECT_NE(v->message.find("3 time(s)"), std::string::npos);
  EXPECT_NE(v->message.find("retry exceeded"), std::string::npos);
  EXPECT_EQ(find_verdict(verdicts, "warnings"), nullptr);  // all three are explained
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 2);
}

TEST(NcclInfoLog, A100TwoNodesWithoutGdr) {
  const NcclInfoLog log = read_log("nccl-1412-a100x16-2node-ib-no-gdr.txt");
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.nodes, 2);
  EXPECT_EQ(log.local_ranks, 8);
  EXPECT_EQ(log.mnnvl, false);
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"swat1-04", "swat1-05"}));
  EXPECT_EQ(log.net_plugin, "IB");  // from "via NET/IB/3"
  EXPECT_EQ(log.transport, "IB");
  EXPECT_EQ(log.net_connections, 4);
  EXPECT_EQ(log.gdr_connections, 0);
  EXPECT_FALSE(log.nccl_version);
  const auto verdicts = explain_nccl_log(log, nullptr);
  const LogVerdict* gdr = find_verdict(verdicts, "gdr");
  ASSERT_NE(gdr, nullptr);
  EXPECT_EQ(gdr->level, LogVerdictLevel::warn);
  EXPECT_NE(gdr->message.find("off on all 4"), std::string::npos);
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 1);
}

TEST(NcclInfoLog, StrippedPrefixesHpcxSharpPlugin224) {
  const NcclInfoLog log = read_log("nccl-1584-h100x8-ib-sharp-nvls-2.24.3.txt");
  EXPECT_EQ(log.nccl_version, "2.24.3");
  EXPECT_EQ(log.cuda_version, "12.2");
  EXPECT_EQ(log.ranks, 8);
  EXPECT_FALSE(log.nodes);
  EXPECT_EQ(log.net_plugin, "IBext_v8");
  EXPECT_EQ(log.transport, "IB");
  EXPECT_EQ(log.plugin_library, "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so");
  ASSERT_EQ(log.devices.size(), 8u);
  EXPECT_EQ(log.devices[0], (NcclNetDevice{"ibp0", 1, "IB", true}));
  EXPECT_EQ(log.devices[7].name, "ibp7");
  EXPECT_EQ(log.nvls_available, true);
  EXPECT_EQ(log.env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(log.env.at("NCCL_IB_PCI_RELAXED_ORDERING"), "1");
  EXPECT_FALSE(log.mnnvl);  // "MNNVL busId ..." is not the flag
  EXPECT_TRUE(log.hosts.empty());
}

TEST(NcclInfoLog, NcclAlgoForcedAndZeroNvlsChannels) {
  const NcclInfoLog log = read_log("nccl-892-h800x8-nccl-algo-env-0-nvls.txt");
  EXPECT_EQ(log.env.at("NCCL_ALGO"), "Tree,Ring,,CollnetDirect,CollnetChain,NVLS");
  EXPECT_EQ(log.coll_channels, 16);
  EXPECT_EQ(log.nvls_channels, 0);
  EXPECT_FALSE(log.collnet_channels);  // the 2.18 summary has no collnet count
  EXPECT_EQ(log.hosts, std::vector<std::string>{"036260b61d3a"});
  const auto verdicts = explain_nccl_log(log, nullptr);
  const LogVerdict* env = find_verdict(verdicts, "env");
  ASSERT_NE(env, nullptr);
  EXPECT_NE(env->message.find("NCCL_ALGO"), std::string::npos);
  EXPECT_NE(env->message.find("empty entry"), std::string::npos);
  EXPECT_EQ(find_verdict(verdicts, "nvls"), nullptr);  // nothing in the log says NVSwitch

  NodeTopology node;
  node.nvswitch = true;
  Gpu gpu;
  gpu.sm = 90;
  node.gpus.push_back(gpu);
  const auto with_node = explain_nccl_log(log, &node);
  const LogVerdict* nvls = find_verdict(with_node, "nvls");
  ASSERT_NE(nvls, nullptr);
  EXPECT_NE(nvls->message.find("0 NVLS channels"), std::string::npos);
  EXPECT_NE(nvls->message.find("NCCL_ALGO"), std::string::npos);
}

TEST(NcclInfoLog, NcclTestsHeaderAndTunerFallback221) {
  const NcclInfoLog log = read_log("nccl-tests-252-h100-2node-ib-tuner-2.21.5.txt");
  EXPECT_EQ(log.nccl_version, "2.21.5");
  EXPECT_EQ(log.cuda_version, "12.4");
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"kolyoz1", "kolyoz2"}));
  EXPECT_EQ(log.coll_channels, 8);
  EXPECT_EQ(log.collnet_channels, 8);
  EXPECT_EQ(log.nvls_channels, 0);
  EXPECT_EQ(log.tuner_fallback, "internal");
  EXPECT_FALSE(log.tuner_loaded);
  EXPECT_TRUE(log.tuner_symbol_missing);
  EXPECT_FALSE(log.transport);
  const auto verdicts = explain_nccl_log(log, nullptr);
  const LogVerdict* tuner = find_verdict(verdicts, "tuner");
  ASSERT_NE(tuner, nullptr);
  EXPECT_EQ(tuner->level, LogVerdictLevel::info);
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 0);
}

TEST(NcclInfoLog, SharpPluginTunerV4Fallback) {
  const NcclInfoLog log = read_log("nccl-tests-319-hgx-2node-ib-sharp-tuner-v4.txt");
  EXPECT_EQ(log.net_plugin, "NCCL RDMA Plugin v8");
  EXPECT_EQ(log.transport, "IB");
  EXPECT_EQ(device_names(log), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_4", "mlx5_5",
                                                         "mlx5_6", "mlx5_7", "mlx5_11"}));
  for (const NcclNetDevice& d : log.devices) EXPECT_TRUE(d.sharp) << d.name;
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"lccn09", "lccn19"}));
  EXPECT_EQ(log.tuner_fallback, "internal");

  // With the node: the ACTIVE ports NCCL leaves out.
  NodeTopology node;
  for (const char* name : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"}) {
    Nic nic;
    nic.index = static_cast<int>(node.nics.size());
    nic.name = name;
    nic.state = "ACTIVE";
    node.nics.push_back(nic);
  }
  const auto verdicts = explain_nccl_log(log, &node);
  const LogVerdict* hcas = find_verdict(verdicts, "hcas");
  ASSERT_NE(hcas, nullptr);
  EXPECT_NE(hcas->message.find("unused: mlx5_3"), std::string::npos) << hcas->message;
}

TEST(NcclInfoLog, Synthetic228TuningLines) {
  const NcclInfoLog log = read_log("synthetic-2.28-tuning-2node-ib.txt");
  EXPECT_EQ(log.nccl_version, "2.28.9");
  EXPECT_EQ(log.cuda_version, "12.9");
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.nodes, 2);
  EXPECT_EQ(log.local_ranks, 8);
  EXPECT_EQ(log.transport, "IB");  // one RoCE device among IB ones
  EXPECT_EQ(device_names(log), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(log.net_connections, 3);
  EXPECT_EQ(log.gdr_connections, 2);
  EXPECT_EQ(log.nvls_available, true);
  EXPECT_EQ(log.nvls_channels, 16);
  EXPECT_EQ(log.tuner_loaded, "nccltune");
  EXPECT_EQ(log.env.at("NCCL_PROTO"), "LL128,Simple");
  ASSERT_EQ(log.choices.size(), 3u);  // the repeated line once
  EXPECT_EQ(log.choices[0], (NcclLoggedChoice{"AllGather", 4096, "RING", "LL"}));
  EXPECT_EQ(log.choices[1], (NcclLoggedChoice{"AllReduce", 1048576, "RING", "LL128"}));
  EXPECT_EQ(log.choices[2], (NcclLoggedChoice{"AllReduce", 268435456, "NVLS", "SIMPLE"}));
  ASSERT_EQ(log.failures.size(), 1u);
  EXPECT_EQ(log.failures[0].status, 12);  // "status=IBV_WC_RETRY_EXC_ERR(12)"

  const auto verdicts = explain_nccl_log(log, nullptr);
  EXPECT_NE(find_verdict(verdicts, "env"), nullptr);
  const LogVerdict* gdr = find_verdict(verdicts, "gdr");
  ASSERT_NE(gdr, nullptr);
  EXPECT_NE(gdr->message.find("off on 1 of 3"), std::string::npos) << gdr->message;
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 2);

  const auto json = nccl_info_log_to_json(log);
  EXPECT_EQ(json["schema"], "nccltune/nccl-log/v1");
  EXPECT_EQ(json["gdr"]["with_gdr"], 2);
  EXPECT_EQ(json["channels"]["coll"], 16);
  EXPECT_EQ(json["choices"][1]["proto"], "LL128");
  EXPECT_TRUE(json["network"]["plugin_library"].is_null());
}

TEST(NcclInfoLog, OlderTuningLinesWithNumbers) {
  const NcclInfoLog log = parse_nccl_info_log(
      "h:1:2 [0] NCCL INFO 1048576 Bytes -> Algo 1 proto 2 time 12.500000\n"
      "h:1:2 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo 0 proto 0 time 5.000000\n",
      "old.log");
  ASSERT_EQ(log.choices.size(), 2u);
  EXPECT_EQ(log.choices[0], (NcclLoggedChoice{std::nullopt, 1048576, "RING", "SIMPLE"}));
  EXPECT_EQ(log.choices[1], (NcclLoggedChoice{"AllReduce", 4096, "TREE", "LL"}));
}

TEST(NcclInfoLog, SocketsDespiteVerbsDevicesFail) {
  const NcclInfoLog log = parse_nccl_info_log(
      "a:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>\n"
      "a:1:2 [0] NCCL INFO Using network Socket\n"
      "a:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n",
      "s.log");
  EXPECT_EQ(log.transport, "Socket");
  EXPECT_EQ(device_names(log), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(find_verdict(explain_nccl_log(log, nullptr), "transport")->level, LogVerdictLevel::info);
  NodeTopology node;
  Nic nic;
  nic.name = "mlx5_0";
  nic.state = "ACTIVE";
  node.nics.push_back(nic);
  const auto verdicts = explain_nccl_log(log, &node);
  const LogVerdict* transport = find_verdict(verdicts, "transport");
  ASSERT_NE(transport, nullptr);
  EXPECT_EQ(transport->level, LogVerdictLevel::fail);
  EXPECT_NE(transport->message.find("mlx5_0"), std::string::npos);
}

TEST(NcclInfoLog, FailureSignatures) {
  const NcclInfoLog log = parse_nccl_info_log(
      "x:1:2 [3] NCCL INFO NCCL_TUNER_PLUGIN set by environment to libmine.so\n"
      "x:1:2 [3] NCCL INFO TUNER/Plugin: Using internal tuner plugin.\n"
      "x:1:2 [3] enqueue.cc:100 NCCL WARN Cuda failure 'out of memory'\n"
      "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1, unhandled system error, NCCL version 2.19.3\n"
      "[E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout: WorkNCCL(...)\n"
      "x:1:2 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 1.2.3.4<1> with error "
      "4, "
      "opcode 0, len 0, vendor err 81 (Send)\n",
      "f.log");
  const auto verdicts = explain_nccl_log(log, nullptr);
  EXPECT_NE(find_verdict(verdicts, "system_error"), nullptr);
  EXPECT_NE(find_verdict(verdicts, "timeout"), nullptr);
  const LogVerdict* completion = find_verdict(verdicts, "ib_completion");
  ASSERT_NE(completion, nullptr);
  EXPECT_NE(completion->message.find("status 4"), std::string::npos);
  EXPECT_NE(completion->message.find("memory registration"), std::string::npos);
  const LogVerdict* warnings = find_verdict(verdicts, "warnings");
  ASSERT_NE(warnings, nullptr);
  EXPECT_NE(warnings->message.find("out of memory"), std::string::npos);
  const LogVerdict* tuner = find_verdict(verdicts, "tuner");
  ASSERT_NE(tuner, nullptr);
  EXPECT_EQ(tuner->level, LogVerdictLevel::warn);
  EXPECT_NE(tuner->message.find("libmine.so"), std::string::npos);
}

TEST(NcclInfoLog, NothingFromNcclIsAWarningNotAnError) {
  const NcclInfoLog log = parse_nccl_info_log("hello\n\xff\xfe binary\n", "empty.log");
  const auto verdicts = explain_nccl_log(log, nullptr);
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].check, "log");
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 1);
}

TEST(NcclInfoLog, ManyRanksInOneReaderAndControlCharacters) {
  NcclInfoLogReader reader;
  reader.add("a:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:1<0>\n", "rank0.log");
  reader.add("b:1:2 [0] NCCL WARN bad \x1b[31mred\n", "rank1.log");
  const NcclInfoLog log = reader.result();
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0].source, "rank1.log");
  EXPECT_EQ(log.warnings[0].text, "bad ?[31mred");
}

}  // namespace

// Found by fuzz_nccl_info_log: a line that ends right after the tuner's tag read one byte past it
// (UndefinedBehaviorSanitizer in the sanitizer build).
TEST(NcclInfoLog, TunerTagWithNothingAfterIt) {
  for (const char* text : {"node1:1:1 [0] NCCL INFO TUNER/Plugin:", "node1:1:1 [0] NCCL INFO TUNER/Plugin: ",
                           "NCCL INFO TUNER/Plugin:\nNCCL INFO TUNER/Plugin: Using internal tuner\n"}) {
    const NcclInfoLog log = parse_nccl_info_log(text, "tuner.log");
    EXPECT_TRUE(log.warnings.empty()) << text;
  }
  EXPECT_EQ(parse_nccl_info_log("NCCL INFO TUNER/Plugin: Using internal tuner\n", "t").tuner_fallback,
            std::optional<std::string>("internal"));
}

namespace {

std::vector<std::string> problems(std::uint32_t mask) {
  return mnnvl_health_problems(mask);
}

}  // namespace

// GB200 NVL72: every rank prints its fabric line; one GPU reports degraded bandwidth.
TEST(NcclInfoLog, Gb200MnnvlWithOneDegradedGpu) {
  const NcclInfoLog log = read_log("synthetic-2.28-gb200-nvl72-mnnvl-degraded.txt");
  EXPECT_EQ(log.mnnvl, true);
  EXPECT_EQ(log.ranks, 16);
  EXPECT_EQ(log.mnnvl_clique_size, 16);
  EXPECT_FALSE(log.mnnvl_nvl_domain_size);  // 2.30's
  EXPECT_EQ(log.mnnvl_clique_ranks.size(), 16u);
  ASSERT_EQ(log.mnnvl_fabrics.size(), 2u);  // the same values once, with their count
  const NcclMnnvlFabric& degraded = log.mnnvl_fabrics[0];
  EXPECT_EQ(degraded.fabric_uuid, "7e51c0a93b24d6f8.2c9d8e1a0f4b7365");
  EXPECT_EQ(degraded.clique_id, 0x4a1u);
  EXPECT_EQ(degraded.state, 3);
  EXPECT_EQ(degraded.health_mask, 0x1a9u);
  EXPECT_EQ(degraded.lines, 1);
  EXPECT_TRUE(degraded.first.text.find("busId 0x901000") != std::string::npos) << degraded.first.text;
  EXPECT_EQ(log.mnnvl_fabrics[1].health_mask, 0x1aau);
  EXPECT_EQ(log.mnnvl_fabrics[1].lines, 15);

  const auto verdicts = explain_nccl_log(log, nullptr);
  const LogVerdict* mnnvl = find_verdict(verdicts, "mnnvl");
  ASSERT_NE(mnnvl, nullptr);
  EXPECT_EQ(mnnvl->level, LogVerdictLevel::warn);
  EXPECT_NE(mnnvl->message.find("1 of 16 rank line(s)"), std::string::npos) << mnnvl->message;
  EXPECT_NE(mnnvl->message.find("0x1a9 (DEGRADED_BW)"), std::string::npos) << mnnvl->message;
  EXPECT_NE(mnnvl->message.find(degraded.first.source + ":" + std::to_string(degraded.first.line)),
            std::string::npos);
  EXPECT_EQ(log_verdicts_exit_code(verdicts), 1);

  const auto json = nccl_info_log_to_json(log);
  EXPECT_EQ(json["mnnvl"], true);
  EXPECT_EQ(json["mnnvl_fabric"]["clique_size"], 16);
  EXPECT_EQ(json["mnnvl_fabric"]["fabrics"][0]["state_name"], "COMPLETED");
  EXPECT_EQ(json["mnnvl_fabric"]["fabrics"][0]["health_problems"],
            nlohmann::ordered_json::array({"DEGRADED_BW"}));
  EXPECT_TRUE(json["mnnvl_fabric"]["fabrics"][1]["health_problems"].empty());
}

// The mask is a set of 2-bit fields that read 2 (FALSE) when healthy, and a configuration field
// that reads 1 (NONE): nonzero is not unhealthy.
TEST(NcclInfoLog, MnnvlHealthMaskFields) {
  for (std::uint32_t healthy : {0x0u, 0xaau, 0x1aau, 0x80u, 0x2u, 0x100u})
    EXPECT_TRUE(problems(healthy).empty()) << std::hex << healthy;
  EXPECT_EQ(problems(0x1), std::vector<std::string>{"DEGRADED_BW"});
  EXPECT_EQ(problems(0x1a9), std::vector<std::string>{"DEGRADED_BW"});
  EXPECT_EQ(problems(0x11a9), std::vector<std::string>{"DEGRADED_BW"});  // bits above 11 are not judged
  EXPECT_EQ(problems(0x1a6), std::vector<std::string>{"ROUTE_RECOVERY"});
  EXPECT_EQ(problems(0x19a), std::vector<std::string>{"ROUTE_UNHEALTHY"});
  EXPECT_EQ(problems(0x16a), std::vector<std::string>{"ACCESS_TIMEOUT_RECOVERY"});
  EXPECT_EQ(problems(0x5aa), std::vector<std::string>{"INCORRECT_CONFIGURATION=INSUFFICIENT_NVLINKS"});
  EXPECT_EQ(problems(0xfaa), std::vector<std::string>{"INCORRECT_CONFIGURATION=15"});
  EXPECT_EQ(problems(0x255), (std::vector<std::string>{"DEGRADED_BW", "ROUTE_RECOVERY", "ROUTE_UNHEALTHY",
                                                       "ACCESS_TIMEOUT_RECOVERY",
                                                       "INCORRECT_CONFIGURATION=INCORRECT_SYSGUID"}));
}

TEST(NcclInfoLog, MnnvlFabricNotCompletedWarnsAndZeroUuidIsNoFabric) {
  const NcclInfoLog log = parse_nccl_info_log(
      "t1:10:10 [0] NCCL INFO MNNVL busId 0x801000 fabric UUID 1f.2e cliqueId 0x7 state 3 healthMask 0x1aa\n"
      "t2:20:20 [0] NCCL INFO MNNVL busId 0x801000 fabric UUID 1f.2e cliqueId 0x7 state 2 healthMask 0x1aa\n"
      "t2:20:20 [0] NCCL INFO comm 0x1 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n",
      "job.log");
  EXPECT_EQ(log.mnnvl, false);
  const auto verdicts = explain_nccl_log(log, nullptr);
  const LogVerdict* mnnvl = find_verdict(verdicts, "mnnvl");
  ASSERT_NE(mnnvl, nullptr);
  EXPECT_EQ(mnnvl->level, LogVerdictLevel::warn);
  EXPECT_NE(
      mnnvl->message.find("1 of 2 rank line(s) report NVLink fabric state IN_PROGRESS (first at job.log:2)"),
      std::string::npos)
      << mnnvl->message;
  EXPECT_NE(mnnvl->message.find("over the network"), std::string::npos) << mnnvl->message;

  // HGX H100/B200 (NVSwitch, no multi-node fabric) print state 3 with UUID 0.0: a fact, no verdict.
  const NcclInfoLog h100 = read_log("nccl-1584-h100x8-ib-sharp-nvls-2.24.3.txt");
  ASSERT_EQ(h100.mnnvl_fabrics.size(), 1u);
  EXPECT_EQ(h100.mnnvl_fabrics[0].fabric_uuid, "0.0");
  EXPECT_EQ(find_verdict(explain_nccl_log(h100, nullptr), "mnnvl"), nullptr);
}

TEST(NcclInfoLog, MnnvlCliqueLines) {
  const NcclInfoLog log = parse_nccl_info_log(
      "n1:1:1 [0] NCCL INFO MNNVL 1 cliqueId 2786 cliqueSize 4 cliqueRank 0 nvlDomainSize 4\n"  // 2.30
      "n1:2:2 [1] NCCL INFO MNNVL 1 cliqueId 2786 cliqueSize 4 cliqueRank 1\n"                  // 2.27
      "n1:3:3 [2] NCCL INFO MNNVL rack serial 1234 slot 1 tray 2 hostId 0 peerType 0 moduleId 3\n",
      "c.log");
  EXPECT_EQ(log.mnnvl, true);
  EXPECT_EQ(log.mnnvl_clique_size, 4);
  EXPECT_EQ(log.mnnvl_nvl_domain_size, 4);
  EXPECT_EQ(log.mnnvl_clique_ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(log.mnnvl_fabrics.empty());
  const LogVerdict* none = find_verdict(explain_nccl_log(log, nullptr), "mnnvl");
  EXPECT_EQ(none, nullptr);  // no fabric line: nothing to judge
}

TEST(NcclInfoLog, SymmetricAndCopyEngineChoices229) {
  const NcclInfoLog log = read_log("synthetic-2.29-b200-symmetric-copy-engine.txt");
  ASSERT_EQ(log.kernel_choices.size(), 6u);  // repeated lines once
  const NcclKernelChoice& gather = log.kernel_choices[0];
  EXPECT_EQ(gather.op, "AllGather");
  EXPECT_EQ(gather.bytes, 134217728);
  EXPECT_EQ(gather.path, "copy_engine");
  EXPECT_EQ(gather.kernel, "cudaMemcpy");
  EXPECT_TRUE(gather.nvls_sync);
  EXPECT_FALSE(gather.channels);
  const NcclKernelChoice& small = log.kernel_choices[1];
  EXPECT_EQ(small.op, "AllReduce");
  EXPECT_EQ(small.bytes, 8192);
  EXPECT_EQ(small.path, "symmetric");
  EXPECT_EQ(small.kernel, "AllReduce_AGxLLMC_R");
  EXPECT_EQ(small.channels, 8);
  EXPECT_EQ(small.threads, 512);
  EXPECT_EQ(small.works, 1);
  EXPECT_EQ(log.kernel_choices[5].kernel, "ReduceScatter_LDMC");
  ASSERT_EQ(log.choices.size(), 1u);  // the one size that ran the usual kernels
  EXPECT_EQ(log.choices[0].algo, "NVLS");
  EXPECT_EQ(log.mnnvl, false);
  EXPECT_EQ(find_verdict(explain_nccl_log(log, nullptr), "mnnvl"), nullptr);

  const auto json = nccl_info_log_to_json(log);
  EXPECT_EQ(json["kernel_choices"][1]["path"], "symmetric");
  EXPECT_EQ(json["kernel_choices"][1]["kernel"], "AllReduce_AGxLLMC_R");
  EXPECT_EQ(json["kernel_choices"][1]["channels"], 8);
  EXPECT_EQ(json["kernel_choices"][0]["nvls_sync"], true);
}

TEST(NcclInfoLog, SymmetricLine227WithoutWorksAndCopyEngineWithoutNvls) {
  const NcclInfoLog log = parse_nccl_info_log(
      "h:1:1 [3] NCCL INFO AllReduce [Symmetric]: 65536 Bytes -> Kernel AllReduce_AGxLL_R nchannels 4 "
      "nthreads 256\n"
      "h:1:1 [0] NCCL INFO Gather [Copy Engine]: 4096 Bytes -> cudaMemcpy\n"
      "h:1:1 [0] NCCL INFO AllReduce [Symmetric]: -5 Bytes -> Kernel X nchannels 4 nthreads 256\n"
      "h:1:1 [0] NCCL INFO AllReduce [Symmetric]: 64 Bytes ->\n",
      "s.log");
  ASSERT_EQ(log.kernel_choices.size(), 2u);
  EXPECT_EQ(log.kernel_choices[0].kernel, "AllReduce_AGxLL_R");
  EXPECT_EQ(log.kernel_choices[0].threads, 256);
  EXPECT_FALSE(log.kernel_choices[0].works);
  EXPECT_EQ(log.kernel_choices[1].op, "Gather");
  EXPECT_FALSE(log.kernel_choices[1].nvls_sync);
}

TEST(NcclInfoLog, TuningTableOfRankZero228WithPat) {
  const NcclInfoLog log = read_log("synthetic-2.28-tuning-table-8node-pat.txt");
  ASSERT_EQ(log.model_tables.size(), 1u);
  const NcclModelTable& table = log.model_tables[0];
  EXPECT_EQ(table.ranks, 8);
  // Ring x 5 collectives x 3 protocols, Tree for AllReduce, CollNet disabled (AllReduce both,
  // AllGather and ReduceScatter Direct), PAT for AllGather and ReduceScatter; 0.0/0.0 left out.
  EXPECT_EQ(table.cells.size(), 15u + 3u + 12u + 2u);
  const auto cell = [&](std::string_view op, std::string_view algo,
                        std::string_view proto) -> const NcclModelCell* {
    for (const NcclModelCell& c : table.cells)
      if (c.op == op && c.algo == algo && c.proto == proto) return &c;
    return nullptr;
  };
  const NcclModelCell* pat = cell("AllGather", "PAT", "SIMPLE");
  ASSERT_NE(pat, nullptr);
  EXPECT_DOUBLE_EQ(pat->latency_us, 38.4);
  EXPECT_DOUBLE_EQ(pat->algbw, 36.0);
  EXPECT_EQ(pat->max_threads, 512);
  EXPECT_EQ(cell("AllGather", "PAT", "LL"), nullptr);  // never modelled
  EXPECT_EQ(cell("AllReduce", "NVLS", "SIMPLE"), nullptr);
  const NcclModelCell* collnet = cell("AllReduce", "COLLNET_CHAIN", "SIMPLE");
  ASSERT_NE(collnet, nullptr);
  EXPECT_DOUBLE_EQ(collnet->latency_us, 18.0);
  EXPECT_DOUBLE_EQ(collnet->algbw, 0.0);  // disabled
  EXPECT_EQ(collnet->max_threads, 256);
  const NcclModelCell* ring = cell("AllReduce", "RING", "SIMPLE");
  ASSERT_NE(ring, nullptr);
  EXPECT_DOUBLE_EQ(ring->algbw, 27.4);
  EXPECT_NEAR(*model_busbw(*ring, table.ranks), 27.4 * 2 * 7 / 8, 1e-9);
  EXPECT_EQ(log.net_connections, 1);  // the other rank's line inside the table

  const auto json = nccl_info_log_to_json(log);
  const auto& cells = json["tuning_tables"][0]["cells"];
  EXPECT_EQ(json["tuning_tables"][0]["ranks"], 8);
  ASSERT_EQ(cells.size(), table.cells.size());
  EXPECT_EQ(cells[0]["op"], "Broadcast");
  EXPECT_EQ(cells[0]["algo"], "RING");
  EXPECT_EQ(cells[0]["enabled"], true);
  EXPECT_NEAR(cells[0]["busbw"].get<double>(), 24.0, 1e-9);

  const std::string text = render_nccl_log_text(log, explain_nccl_log(log, nullptr));
  EXPECT_NE(text.find("AllGather        PAT            SIMPLE         38.4      36.0      31.5"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("COLLNET"), std::string::npos);  // disabled pairs are not NCCL's model of the job
}

// Two communicators' tables at once in a mixed file (each process its own), and a table whose
// communicator size the log does not show.
TEST(NcclInfoLog, TuningTablesOfTwoProcessesAndWithoutRanks) {
  const std::string header = "  Algorithm   |            Tree   |            Ring   |";
  const std::string protocols =
      "  Protocol    |    LL |  LL128 | Simple |    LL |  LL128 | Simple |    LL |  LL128 | Simple |";
  std::string text;
  text += "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0\n";
  text += "b:2:2 [0] NCCL INFO ncclCommInitRank comm 0x2 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START\n";
  for (const char* p : {"a:1:1", "b:2:2"}) text += std::string(p) + " [0] NCCL INFO " + header + "\n";
  for (const char* p : {"a:1:1", "b:2:2"}) text += std::string(p) + " [0] NCCL INFO " + protocols + "\n";
  text +=
      "a:1:1 [0] NCCL INFO     AllReduce |  5.0/ 1.0 |  6.0/ 2.0 |  7.0/ 3.0 |  8.0/ 4.0 |  9.0/ 5.0 | 10.0/ "
      "6.0 |\n";
  text +=
      "b:2:2 [0] NCCL INFO     AllReduce |  5.0/ 1.0 |  6.0/ 2.0 |  7.0/ 3.0 |  8.0/ 4.0 |  9.0/ 5.0 | 10.0/ "
      "9.0 |\n";
  text +=
      "b:2:2 [0] NCCL INFO     AllReduce |  5.0/ 1.0 |  bad |  7.0/ 3.0 |  8.0/ 4.0 |  9.0/ 5.0 | 10.0/ 9.0 "
      "|\n";
  text +=
      "  Algorithm   |            Ring   |\n  Protocol    | LL | LL128 | Simple | LL | LL128 | Simple | LL | "
      "LL128 | Simple |\n";
  text += "    AllGather |  1.0/ 2.0 |  0.0/ 0.0 |  3.0/ 4.0 |\n";
  const NcclInfoLog log = parse_nccl_info_log(text, "mixed.log");
  ASSERT_EQ(log.model_tables.size(), 3u);
  std::map<std::optional<int>, const NcclModelTable*> by_ranks;
  for (const NcclModelTable& t : log.model_tables) by_ranks[t.ranks] = &t;
  ASSERT_EQ(by_ranks.size(), 3u);
  EXPECT_EQ(by_ranks.at(4)->cells.size(), 6u);
  EXPECT_DOUBLE_EQ(by_ranks.at(4)->cells.back().algbw, 6.0);
  EXPECT_EQ(by_ranks.at(2)->cells.size(), 6u);  // the row with a cell that is not a number is skipped
  EXPECT_DOUBLE_EQ(by_ranks.at(2)->cells.back().algbw, 9.0);
  const NcclModelTable& bare = *by_ranks.at(std::nullopt);
  ASSERT_EQ(bare.cells.size(), 2u);
  EXPECT_EQ(bare.cells[1].proto, "SIMPLE");
  EXPECT_FALSE(bare.cells[1].max_threads);
  EXPECT_FALSE(model_busbw(bare.cells[1], bare.ranks));
  EXPECT_TRUE(nccl_info_log_to_json(log)["tuning_tables"][0]["cells"][0].contains("busbw"));
}

// NVLS joins a communicator's GPUs on one node: a rail's log (one GPU per node) saying it is not
// available is no sign of a broken fabric manager, even on an NVSwitch node.
TEST(NcclInfoLog, NoNvlsVerdictForOneGpuPerNode) {
  NcclInfoLog rail;
  rail.nccl_lines = 4;
  rail.ranks = 2;
  rail.nodes = 2;
  rail.local_ranks = 1;
  rail.nvls_available = false;
  rail.nvls_channels = 0;
  NodeTopology node;
  node.nvswitch = true;
  node.gpus.resize(1);
  node.gpus[0].sm = 90;
  for (const LogVerdict& v : explain_nccl_log(rail, &node)) EXPECT_NE(v.check, "nvls") << v.message;
  NcclInfoLog world = rail;
  world.local_ranks = 2;
  const auto verdicts = explain_nccl_log(world, &node);
  EXPECT_TRUE(std::any_of(verdicts.begin(), verdicts.end(), [](const LogVerdict& v) {
    return v.check == "nvls" && v.message.find("fabric manager") != std::string::npos;
  }));
}
