// A tune's NCCL logs travel as one summary per node (nccl_log/node_log_summary.h): each node's
// first rank reads its ranks' logs, rank 0 adds the summaries. What rank 0 ends with must be what
// reading every rank's text there would have given.
#include "nccl_log/node_log_summary.h"

#include <gtest/gtest.h>

#include "test_files.h"

using namespace nccltune;

namespace {

// Real logs of several hosts and failures, as the ranks of three "nodes" (two files each).
const std::vector<std::vector<std::string>> kNodes = {
    {"nccl-1584-h100x8-ib-sharp-nvls-2.24.3.txt", "nccl-1412-a100x16-2node-ib-no-gdr.txt"},
    {"nccl-1405-roce-ipv6-completion-error-status12.txt", "synthetic-2.28-tuning-2node-ib.txt"},
    {"nccl-tests-319-hgx-2node-ib-sharp-tuner-v4.txt", "aws-ofi-nccl-715-p4d-efa-ofi-1.11.0.txt"},
    {"synthetic-2.28-gb200-nvl72-mnnvl-degraded.txt", "synthetic-2.29-b200-symmetric-copy-engine.txt"},
    {"synthetic-2.28-tuning-table-8node-pat.txt"}};

std::string log_text(const std::string& name) {
  return test_support::read_file(test_support::fixture("nccl-info-logs/" + name));
}

}  // namespace

TEST(NodeLogSummary, SummariesPerNodeGiveWhatEveryRanksTextGives) {
  NcclInfoLogReader every_rank, by_node;
  for (const auto& node : kNodes) {
    NcclInfoLogReader on_node;
    for (const std::string& name : node) {
      every_rank.add(log_text(name), name);
      on_node.add(log_text(name), name);
    }
    Result<NcclInfoLog> sent = node_log_summary_from_json(node_log_summary_to_json(on_node.result()));
    ASSERT_TRUE(sent) << sent.error();
    by_node.add(*sent);
  }
  const NcclInfoLog whole = every_rank.result();
  const NcclInfoLog summed = by_node.result();
  EXPECT_EQ(nccl_info_log_to_json(summed), nccl_info_log_to_json(whole));
  EXPECT_EQ(summed.failures.size(), whole.failures.size());
  EXPECT_EQ(summed.nccl_lines, whole.nccl_lines);
  EXPECT_GT(whole.net_connections, 0);
  EXPECT_FALSE(whole.failures.empty());
  EXPECT_FALSE(whole.mnnvl_fabrics.empty());
  EXPECT_FALSE(whole.kernel_choices.empty());
  EXPECT_FALSE(whole.model_tables.empty());
}

TEST(NodeLogSummary, EveryFieldRoundTrips) {
  NcclInfoLog log;
  log.nccl_version = "2.28.9";
  log.ranks = 16;
  log.nodes = 2;
  log.hosts = {"a", "b"};
  log.devices = {{"mlx5_0", 1, "IB", true}, {"eth0", std::nullopt, std::nullopt, false}};
  log.ib_devices_listed = log.ofi_lines = log.tuner_symbol_missing = log.net_plugin_in_use = true;
  log.net_plugin = "IB";
  log.net_connections = 32;
  log.gdr_connections = 16;
  log.nvls_available = false;
  log.mnnvl = true;
  log.mnnvl_fabrics = {
      {"7e51c0a93b24d6f8.2c9d8e1a0f4b7365", 0x4a1, 3, 0x1a9, 5, {"rank 9", 40, "MNNVL busId 0x901000"}}};
  log.mnnvl_clique_size = 72;
  log.mnnvl_nvl_domain_size = 72;
  log.mnnvl_clique_ranks = {0, 9};
  log.kernel_choices = {
      {"AllGather", 4096, "copy_engine", "cudaMemcpy", std::nullopt, std::nullopt, std::nullopt, true},
      {"AllReduce", 8192, "symmetric", "AllReduce_AGxLLMC_R", 8, 512, 1, false}};
  log.model_tables = {{8,
                       {{"AllReduce", "RING", "SIMPLE", 182.7, 27.4, 512},
                        {"AllReduce", "TREE", "LL", 0.1, 0.0, std::nullopt}}}};
  log.env = {{"NCCL_ALGO", "Ring"}};
  log.tuner_loaded = "nccltune";
  log.choices = {{"AllReduce", 65536, "RING", "LL128"}, {std::nullopt, 8, "TREE", "LL"}};
  log.warnings = {{"rank 3", 12, "misc/socket.cc:50 NCCL WARN x"}};
  log.warnings_dropped = 4;
  log.failures = {{NcclFailureKind::ib_completion, 12, {"rank 1", 7, "status=12"}}};
  log.nccl_lines = 99;
  Result<NcclInfoLog> back = node_log_summary_from_json(node_log_summary_to_json(log));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(node_log_summary_to_json(*back), node_log_summary_to_json(log));
  EXPECT_EQ(back->failures.front().where.text, "status=12");
  EXPECT_EQ(back->devices, log.devices);
  EXPECT_EQ(back->kernel_choices, log.kernel_choices);
  EXPECT_EQ(back->model_tables, log.model_tables);
  ASSERT_EQ(back->mnnvl_fabrics.size(), 1u);
  EXPECT_EQ(back->mnnvl_fabrics[0].health_mask, 0x1a9u);
  EXPECT_EQ(back->mnnvl_fabrics[0].first.text, "MNNVL busId 0x901000");
}

TEST(NodeLogSummary, WhatIsNotASummaryIsOneLine) {
  for (const char* text : {"", "[]", "{}", "{\"hosts\": 3}", "not json"}) {
    Result<NcclInfoLog> parsed = node_log_summary_from_json(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().find('\n'), std::string::npos) << parsed.error();
    EXPECT_NE(parsed.error().find("NCCL log summary"), std::string::npos) << parsed.error();
  }
}

// A tune that measures a rail and a node beside the world makes three communicators in each
// process: their init lines must not be read as one communicator's (a rail of one GPU per node
// says NVLS is not available; the world and the node have it).
TEST(NodeLogSummary, EachCommunicatorOfAProcessIsReadApart) {
  const std::string text = log_text("fake-2.28-world-rail-node-2node.txt");
  const std::vector<std::string> parts = communicator_parts(text);
  // Two processes: rank 0's three communicators, rank 1's two (this excerpt leaves its rail out).
  ASSERT_EQ(parts.size(), 5u);
  const std::vector<NcclInfoLog> logs = node_logs_by_communicator({{"rank 0", text}});
  ASSERT_EQ(logs.size(), 3u);
  const NcclInfoLog& world = logs[0];
  EXPECT_EQ(world.ranks, 4);
  EXPECT_EQ(world.local_ranks, 2);
  EXPECT_EQ(world.nvls_available, true);
  EXPECT_EQ(world.nvls_channels, 16);
  EXPECT_EQ(world.coll_channels, 16);
  EXPECT_EQ(world.net_connections, 2);
  EXPECT_EQ(world.transport, "IB");
  EXPECT_EQ(world.choices.size(), 3u);  // the calls' lines name no communicator: the world's part
  for (const NcclInfoLog& split : {logs[1], logs[2]}) {
    EXPECT_EQ(split.ranks, 2);
    EXPECT_TRUE(split.choices.empty());
    EXPECT_EQ(split.transport, "IB");  // the process's network lines are every part's
  }
  const NcclInfoLog& rail = logs[1].nodes == 2 ? logs[1] : logs[2];
  const NcclInfoLog& node = logs[1].nodes == 2 ? logs[2] : logs[1];
  EXPECT_EQ(rail.local_ranks, 1);
  EXPECT_EQ(rail.nvls_available, false);
  EXPECT_EQ(rail.nvls_channels, 0);
  EXPECT_EQ(rail.net_connections, 2);
  EXPECT_EQ(node.nodes, 1);
  EXPECT_EQ(node.nvls_available, true);
  EXPECT_EQ(node.coll_channels, 24);
  EXPECT_EQ(node.net_connections, 0);

  Result<std::vector<NcclInfoLog>> sent = node_log_summaries_from_json(node_log_summaries_to_json(logs));
  ASSERT_TRUE(sent) << sent.error();
  ASSERT_EQ(sent->size(), 3u);
  EXPECT_EQ(node_log_summary_to_json((*sent)[1]), node_log_summary_to_json(logs[1]));
  EXPECT_FALSE(node_log_summaries_from_json("{}"));
}

// Real NCCL names each communicator's init by an "Init START" line (ncclCommInitRank,
// ncclCommSplit); where the log has them, a part starts there, and a log without any line of a
// communicator is one part.
TEST(NodeLogSummary, InitStartLinesStartACommunicatorsPart) {
  const std::string text =
      "h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
      "h:1:1 [0] NCCL INFO Using network IB\n"
      "h:1:2 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 1a000 "
      "commId 0x99 - Init START\n"
      "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "h:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)\n"
      "h:1:1 [0] NCCL INFO Using network IB\n"
      "h:1:3 [0] NCCL INFO ncclCommSplit comm 0x2 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 parent 0x1 "
      "splitCount 1 color 0 key 0 - Init START\n"
      "h:1:3 [0] NCCL INFO comm 0x2 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
      "h:1:3 [0] NCCL INFO NVLS multicast support is not available on dev 0 (NVLS_NCHANNELS 0)\n";
  const std::vector<NcclInfoLog> logs = node_logs_by_communicator({{"rank 0", text}});
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].ranks, 16);
  EXPECT_EQ(logs[0].nvls_available, true);
  EXPECT_EQ(logs[1].ranks, 2);
  EXPECT_EQ(logs[1].nvls_available, false);
  EXPECT_EQ(logs[1].nccl_version, "2.28.9");  // the process's lines before its first part

  EXPECT_EQ(communicator_parts("h:1:1 [0] NCCL INFO Using network IB\n").size(), 1u);
  EXPECT_EQ(node_logs_by_communicator({}).size(), 1u);  // a node with nothing still sends one summary
}
