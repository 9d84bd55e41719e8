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
