// Reading NCCL Inspector's Prometheus textfiles (tests/fixtures/inspector/README.md: the format
// strings of NCCL's plugins/profiler/inspector/inspector_prom.cc at v2.30.7-1) and what observe
// makes of them: what NCCL ran against the profile's choice, and suspect hosts.
#include "observe/inspector_prom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "observe/algo_proto.h"
#include "observe/host_suspects.h"
#include "observe/inspector_files.h"
#include "observe/observe_report.h"
#include "profile/profile.h"
#include "test_files.h"

namespace nccltune {
namespace {

const std::string kPromFixtures = std::string(NCCLTUNE_FIXTURES) + "/inspector";

// inspectorPromGetLabelsColl's labels, in its order.
const std::string kCollLabels =
    "version=\"v5.1\",slurm_job_id=\"unknown\",node=\"nvl72004-T01\",gpu=\"GPU0\",comm_name=\"DP Group 0\","
    "n_nodes=\"1\",nranks=\"4\",collective=\"AllReduce\",message_size=\"4-5GB\",algo_proto=\"Ring_ll\"";

ObservedJob read_prom_fixture(const std::string& name, std::vector<std::string>* problems = nullptr) {
  const InspectorFiles files = find_inspector_files({kPromFixtures + "/" + name});
  ObserveAccumulator accumulator;
  for (const std::string& problem : files.problems) accumulator.add_problem(problem);
  read_inspector_files(files.files, accumulator);
  read_inspector_prom_files(files.prom_files, accumulator);
  ObservedJob job = accumulator.finish();
  if (problems != nullptr) *problems = accumulator.problems();
  return job;
}

TEST(InspectorProm, ReadsTheReadmesExampleLine) {
  // NCCL's plugins/profiler/inspector/README.md at v2.30.7-1, "Current Metric Format Examples".
  auto line = parse_inspector_prom_line("nccl_bus_bandwidth_gbs{" + kCollLabels + "} 678.263");
  ASSERT_TRUE(line.ok()) << line.error();
  ASSERT_TRUE(line->sample.has_value());
  const InspectorPromSample& sample = *line->sample;
  EXPECT_EQ(sample.metric, InspectorPromMetric::bus_bandwidth);
  EXPECT_EQ(sample.version, "v5.1");
  EXPECT_EQ(sample.node, "nvl72004-T01");
  EXPECT_EQ(sample.gpu, "GPU0");
  EXPECT_EQ(sample.comm_name, "DP Group 0");
  EXPECT_EQ(sample.n_nodes, 1);
  EXPECT_EQ(sample.nranks, 4);
  EXPECT_EQ(sample.operation, "AllReduce");
  EXPECT_EQ(sample.min_bytes, 4ull << 30);
  EXPECT_EQ(sample.max_bytes, (5ull << 30) - 1);
  EXPECT_EQ(sample.algo_proto, "Ring_ll");
  EXPECT_DOUBLE_EQ(sample.value, 678.263);
  EXPECT_TRUE(sample.unknown_labels.empty());

  auto p2p = parse_inspector_prom_line(
      "nccl_p2p_bus_bandwidth_gbs{version=\"v5.1\",slurm_job_id=\"unknown\",node=\"nvl72004-T01\","
      "gpu=\"GPU0\",comm_name=\"DP Group 0\",n_nodes=\"1\",nranks=\"4\",p2p_operation=\"Send\","
      "message_size=\"512-513MB\"} 464.9");
  ASSERT_TRUE(p2p.ok()) << p2p.error();
  ASSERT_TRUE(p2p->sample.has_value());
  EXPECT_EQ(p2p->sample->metric, InspectorPromMetric::p2p_bus_bandwidth);
  EXPECT_EQ(p2p->sample->operation, "Send");
}

TEST(InspectorProm, NanValuesCommentsAndUnknownMetrics) {
  auto nan = parse_inspector_prom_line("nccl_collective_exec_time_microseconds{" + kCollLabels + "} nan");
  ASSERT_TRUE(nan.ok()) << nan.error();
  EXPECT_TRUE(std::isnan(nan->sample->value));
  auto comment = parse_inspector_prom_line("# HELP nccl_bus_bandwidth_gbs busbw");
  ASSERT_TRUE(comment.ok());
  EXPECT_FALSE(comment->sample.has_value());
  EXPECT_TRUE(comment->unknown_metric.empty());
  auto other = parse_inspector_prom_line("node_load1 0.5");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->unknown_metric, "node_load1");
  auto unknown_label = parse_inspector_prom_line("nccl_bus_bandwidth_gbs{" + kCollLabels + ",rank=\"3\"} 1");
  ASSERT_TRUE(unknown_label.ok()) << unknown_label.error();
  EXPECT_EQ(unknown_label->sample->unknown_labels, std::vector<std::string>{"rank"});
}

TEST(InspectorProm, NamesWhatIsWrong) {
  const auto error = [](const std::string& text) {
    auto line = parse_inspector_prom_line(text);
    return line.ok() ? std::string("parsed") : line.error();
  };
  const std::string no_algo = kCollLabels.substr(0, kCollLabels.find(",algo_proto"));
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + no_algo + "} 1").find("no algo_proto label"),
            std::string::npos);
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + kCollLabels + "}").find("has no value (cut short?)"),
            std::string::npos);
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + kCollLabels.substr(0, 35)).find("no closing quote"),
            std::string::npos);
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + kCollLabels + ",node=\"x\"} 1").find("node appears twice"),
            std::string::npos);
  std::string zero_ranks = kCollLabels;
  zero_ranks.replace(zero_ranks.find("nranks=\"4\""), 10, "nranks=\"0\"");
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + zero_ranks + "} 1").find("nranks 0 is not a count"),
            std::string::npos);
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + kCollLabels + "} fast").find("value fast is not a number"),
            std::string::npos);
  EXPECT_NE(error("nccl_bus_bandwidth_gbs{" + kCollLabels + "} -3").find("negative"), std::string::npos);
  EXPECT_NE(error("{x=\"1\"} 1").find("no metric name"), std::string::npos);
}

TEST(InspectorProm, MessageSizeRangesAreInspectorsBuckets) {
  // inspectorPromFormatMessageSizeRange: floor(bytes / unit) to +1, 1024-based units up to TB.
  EXPECT_EQ(*parse_message_size_range("0B"), std::make_pair(std::uint64_t(0), std::uint64_t(0)));
  EXPECT_EQ(*parse_message_size_range("8-9KB"), std::make_pair(std::uint64_t(8192), std::uint64_t(9215)));
  EXPECT_EQ(*parse_message_size_range("1023-1024B"),
            std::make_pair(std::uint64_t(1023), std::uint64_t(1023)));
  EXPECT_EQ(parse_message_size_range("2048-2049TB")->first, 2048ull << 40);
  for (const char* bad : {"4-6GB", "0-1KB", "4-5PB", "1025-1026MB", "4GB", "-5GB", ""})
    EXPECT_FALSE(parse_message_size_range(bad).ok()) << bad;
}

TEST(InspectorProm, KnowsInspectorsFileNames) {
  EXPECT_TRUE(
      is_inspector_prom_file_name("nccl_inspector_metrics_3f2a9c1e-0b4d-6e7f-8a9b-0c1d2e3f4a50.prom"));
  EXPECT_FALSE(is_inspector_prom_file_name("nccltune.prom"));
  EXPECT_FALSE(is_inspector_prom_file_name("nccl_inspector_metrics_x.prom.tmp"));
}

TEST(AlgoProto, InspectorsSpellingsAreTheProfilesNames) {
  EXPECT_EQ(normalize_algo_proto("RING_LL128"), "Ring/LL128");
  EXPECT_EQ(normalize_algo_proto("Ring_ll"), "Ring/LL");
  EXPECT_EQ(normalize_algo_proto("NVLS_TREE_SIMPLE"), "NVLSTree/Simple");
  EXPECT_EQ(normalize_algo_proto("COLLNET_DIRECT_SIMPLE"), "CollNetDirect/Simple");
  EXPECT_EQ(normalize_algo_proto("PAT/Simple"), "PAT/Simple");
  EXPECT_EQ(normalize_algo_proto("unknown"), std::nullopt);
  EXPECT_EQ(normalize_algo_proto("unknown_unknown"), std::nullopt);
  EXPECT_EQ(normalize_algo_proto("RING_LL256"), std::nullopt);
  EXPECT_TRUE(algo_proto_matches("Ring/LL128", "Ring/LL128"));
  EXPECT_TRUE(algo_proto_matches("Ring/LL128", "any/LL128"));
  EXPECT_TRUE(algo_proto_matches("Ring/LL128", "Ring/any"));
  EXPECT_FALSE(algo_proto_matches("Tree/LL128", "Ring/LL128"));
  EXPECT_FALSE(algo_proto_matches("Ring/LL", "Ring/LL128"));
}

TEST(ObserveProm, ReadsEveryGpusFileIntoCommunicatorsByName) {
  std::vector<std::string> problems;
  const ObservedJob job = read_prom_fixture("prom-2n2g", &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  // 4 GPUs x 4 collective buckets (busbw lines; exec time and point-to-point lines are not records).
  EXPECT_EQ(job.records, 16u);
  EXPECT_EQ(job.versions, std::set<std::string>{"v5.1"});
  EXPECT_EQ(job.hosts, (std::set<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(job.communicators.size(), 5u);
  const ObservedCommunicator& world = job.communicators.at("prom:4242:2x4:world");
  EXPECT_TRUE(world.prometheus);
  EXPECT_EQ(world.name, "world");
  EXPECT_EQ(world.n_ranks, 4);
  EXPECT_EQ(world.nnodes, 2);
  EXPECT_EQ(world.ranks.size(), 4u);
  EXPECT_EQ(world.ranks.at(0).gpu, "GPU0");
  EXPECT_EQ(world.matched + world.unmatched, 0u);                     // no sequence numbers: nothing to match
  const ObservedRow& all_reduce = world.rows.at({"all_reduce", 20});  // 1-2MB: [1 MiB, 2 MiB)
  EXPECT_EQ(all_reduce.records, 4u);
  EXPECT_EQ(all_reduce.ran, (std::map<std::string, std::uint64_t>{{"Ring/LL128", 4}}));
  EXPECT_DOUBLE_EQ(all_reduce.exec_us, 4 * 30.0);
}

TEST(ObserveProm, WhatRanIsHeldAgainstTheProfilesChoice) {
  auto profile = read_profile(std::string(NCCLTUNE_FIXTURES) + "/profiles/with-plugin-2n.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error();
  const ObserveReport report = build_observe_report(read_prom_fixture("prom-2n2g"), {"prom-2n2g"}, &*profile,
                                                    "with-plugin-2n.yaml", kDefaultObserveTolerance);
  const ObserveCommunicatorReport& world = report.communicators.front();
  ASSERT_EQ(world.name, "world");
  EXPECT_EQ(world.source, "prometheus");
  EXPECT_EQ(world.shape, "world");
  for (const ObserveRow& row : world.rows) {
    EXPECT_FALSE(row.ops.has_value());  // the textfile holds no count
    if (row.collective == "all_reduce") {
      EXPECT_EQ(row.ran, "Ring/LL128");
      EXPECT_EQ(row.tuned, "Ring/LL128");
      EXPECT_EQ(row.verdict, ObserveVerdict::as_tuned);
    } else {
      EXPECT_EQ(row.collective, "all_gather");
      EXPECT_EQ(row.ran, "Tree/LL");
      EXPECT_EQ(row.tuned, "Ring/LL128");
      EXPECT_EQ(row.verdict, ObserveVerdict::not_served);
    }
  }
  for (const ObserveCommunicatorReport& c : report.communicators)
    if (c.name != "world") {
      EXPECT_EQ(c.shape, c.nnodes == 1 ? "node" : "rail") << c.name;
      EXPECT_EQ(c.rows.front().verdict, ObserveVerdict::unmeasured);
    }
  EXPECT_TRUE(report.suspects.empty());
  EXPECT_EQ(observe_exit_code(report), 1);
}

TEST(ObserveProm, AServedRowAmongOthersIsServed) {
  EXPECT_EQ(judge_row(95, 100, std::string("Tree/LL,Ring/LL128"), "Ring/LL128", 0.1),
            ObserveVerdict::as_tuned);
  EXPECT_EQ(judge_row(95, 100, std::string("Tree/LL,NVLS/Simple"), "Ring/LL128", 0.1),
            ObserveVerdict::not_served);
  EXPECT_EQ(judge_row(95, 100, std::string("Ring/Simple"), "Ring/any", 0.1), ObserveVerdict::as_tuned);
}

TEST(ObserveProm, AHostSlowOnlyOnItsNetworkIsASuspect) {
  const ObserveReport report = build_observe_report(read_prom_fixture("prom-suspect"), {"prom-suspect"},
                                                    nullptr, "", kDefaultObserveTolerance);
  ASSERT_EQ(report.suspects.size(), 1u);
  EXPECT_EQ(report.suspects[0].host, "node-c");
  EXPECT_NE(report.suspects[0].why.find("2 of 2 network communicators slow"), std::string::npos)
      << report.suspects[0].why;
  EXPECT_NE(report.suspects[0].why.find("1 NVLink communicator not"), std::string::npos);
  EXPECT_TRUE(report.stragglers.empty());
  EXPECT_EQ(observe_exit_code(report), 2);
}

ObserveCommunicatorReport pair_group(const std::string& name, std::vector<std::string> hosts, int nnodes,
                                     double busbw, std::optional<double> ratio = std::nullopt) {
  ObserveCommunicatorReport c;
  c.id = c.name = name;
  c.n_ranks = 2;
  c.nnodes = nnodes;
  c.hosts = std::move(hosts);
  c.shape = nnodes > 1 ? "rail" : "node";
  ObserveRow row;
  row.collective = "all_reduce";
  row.min_bytes = 1 << 20;
  row.busbw_median = busbw;
  row.ratio = ratio;
  c.rows.push_back(row);
  return c;
}

TEST(HostSuspects, EveryHostSlowIsTheNetworkNotAHost) {
  // Two hosts, their one rail pair and the world both below the profile: each host reads slow, so
  // neither is named (the rows say below_tuned).
  const std::vector<ObserveCommunicatorReport> both = {
      pair_group("rail 0", {"a", "b"}, 2, 40, 0.5), pair_group("rail 1", {"a", "b"}, 2, 40, 0.5),
      pair_group("node a", {"a"}, 1, 300, 1.0), pair_group("node b", {"b"}, 1, 300, 1.0)};
  EXPECT_TRUE(find_host_suspects(both, 0.1).empty());
}

TEST(HostSuspects, ASlowNvlinkOrASingleNetworkGroupNamesNobody) {
  std::vector<ObserveCommunicatorReport> groups = {
      pair_group("ab", {"a", "b"}, 2, 90), pair_group("ac", {"a", "c"}, 2, 45),
      pair_group("bc", {"b", "c"}, 2, 46), pair_group("node a", {"a"}, 1, 300),
      pair_group("node b", {"b"}, 1, 300), pair_group("node c", {"c"}, 1, 300)};
  ASSERT_EQ(find_host_suspects(groups, 0.1).size(), 1u);
  // node-c's NVLink group also slow: the host, not its network; not a network suspect.
  groups[5].rows[0].busbw_median = 100;
  EXPECT_TRUE(find_host_suspects(groups, 0.1).empty());
  // One network group is not enough (the fleet survey's two or more pairs).
  groups[5].rows[0].busbw_median = 300;
  groups.erase(groups.begin() + 2);
  EXPECT_TRUE(find_host_suspects(groups, 0.1).empty());
}

TEST(ObserveProm, EachBadLineIsOneLineNamingTheFileAndTheRestIsRead) {
  std::vector<std::string> problems;
  const ObservedJob job = read_prom_fixture("bad-prom", &problems);
  const auto has = [&](const std::string& a, const std::string& b) {
    return std::count_if(problems.begin(), problems.end(), [&](const std::string& line) {
             return line.find(a) != std::string::npos && line.find(b) != std::string::npos;
           }) == 1;
  };
  EXPECT_TRUE(has(".prom:3: ", "unknown label rank (read past)"));
  EXPECT_TRUE(has(".prom:4: ", "unknown metric nccl_collective_calls_total (skipped)"));
  EXPECT_TRUE(has(".prom:5: ", "slurm_job_id 999, not 4242"));
  EXPECT_TRUE(has(".prom:7: ", "version v6.1, not v5.1"));
  EXPECT_TRUE(has(".prom:10: ", "the last line has no newline"));
  for (const std::string& problem : problems) EXPECT_EQ(problem.find('\n'), std::string::npos);
  // Read: the 1-2MB sample, the 2-3MB one past its unknown label, the 16-17MB busbw line (its
  // exec time line is the one cut short).
  EXPECT_EQ(job.records, 3u);
  const ObservedRow& row = job.communicators.at("prom:4242:2x2:world").rows.at({"all_reduce", 24});
  EXPECT_EQ(row.records, 1u);
  EXPECT_DOUBLE_EQ(row.exec_us, 0);
}

TEST(ObserveProm, AFileFarLargerThanATextfileIsNotRead) {
  test_support::TempDir dir;
  const std::filesystem::path big = dir / "nccl_inspector_metrics_0.prom";
  { std::ofstream(big) << "nccl_bus_bandwidth_gbs{" << kCollLabels << "} 1\n"; }
  std::filesystem::resize_file(big, kMaxInspectorPromFileBytes + 1);  // sparse: no disk written
  ObserveAccumulator accumulator;
  read_inspector_prom_files({big}, accumulator);
  EXPECT_EQ(accumulator.finish().records, 0u);
  ASSERT_EQ(accumulator.problems().size(), 1u);
  EXPECT_NE(accumulator.problems()[0].find("nccl_inspector_metrics_0.prom: 16777217 bytes"),
            std::string::npos)
      << accumulator.problems()[0];
}

}  // namespace
}  // namespace nccltune
