// Reading NCCL Inspector's records (tests/fixtures/inspector/README.md: the layout of NCCL's
// plugins/profiler/inspector/README.md at v2.30.7-1, ext-profiler/inspector at v2.28.9-1).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "observe/inspector_files.h"
#include "observe/inspector_record.h"
#include "observe/observed_job.h"

namespace nccltune {
namespace {

const std::string kInspectorFixtures = std::string(NCCLTUNE_FIXTURES) + "/inspector";

// One record as Inspector writes it (inspector_json.cc: header, metadata, coll_perf, compact).
std::string inspector_line(const std::string& id, int rank, int n_ranks, int nnodes, std::uint64_t sn,
                           std::uint64_t bytes, double exec_us, double busbw, const std::string& host = "h",
                           int pid = 1) {
  return "{\"header\":{\"id\":\"" + id + "\",\"comm_name\":\"c\",\"rank\":" + std::to_string(rank) +
         ",\"n_ranks\":" + std::to_string(n_ranks) + ",\"nnodes\":" + std::to_string(nnodes) +
         "},\"metadata\":{\"inspector_output_format_version\":\"v4.0\",\"git_rev\":\"\",\"rec_mechanism\":"
         "\"nccl_profiler_interface\",\"dump_timestamp_us\":1,\"hostname\":\"" +
         host + "\",\"pid\":" + std::to_string(pid) +
         "},\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":" + std::to_string(sn) +
         ",\"coll_msg_size_bytes\":" + std::to_string(bytes) +
         ",\"coll_exec_time_us\":" + std::to_string(exec_us) +
         ",\"coll_timing_source\":\"kernel_gpu\",\"coll_algobw_gbs\":1.0,"
         "\"coll_busbw_gbs\":" +
         std::to_string(busbw) + "}}";
}

ObservedJob read_fixture(const std::string& name, std::vector<std::string>* problems = nullptr) {
  const InspectorFiles files = find_inspector_files({kInspectorFixtures + "/" + name});
  ObserveAccumulator accumulator;
  for (const std::string& problem : files.problems) accumulator.add_problem(problem);
  read_inspector_files(files.files, accumulator);
  ObservedJob job = accumulator.finish();
  if (problems != nullptr) *problems = accumulator.problems();
  return job;
}

TEST(InspectorRecord, ReadsTheFieldsOfNccl230sLayout) {
  const auto parsed =
      parse_inspector_line(inspector_line("0xab", 2, 8, 1, 1407, 17179869184ULL, 61974, 485.119099));
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  ASSERT_TRUE(parsed->has_value());
  const InspectorRecord& record = **parsed;
  EXPECT_EQ(record.comm_id, "0xab");
  EXPECT_EQ(record.comm_name, "c");
  EXPECT_EQ(record.rank, 2);
  EXPECT_EQ(record.n_ranks, 8);
  EXPECT_EQ(record.nnodes, 1);
  EXPECT_EQ(record.version, "v4.0");
  EXPECT_EQ(record.coll, "AllReduce");
  EXPECT_EQ(record.coll_sn, 1407u);
  EXPECT_EQ(record.bytes, 17179869184ULL);
  EXPECT_DOUBLE_EQ(record.exec_us, 61974);
  EXPECT_NEAR(record.busbw_gbps, 485.119099, 1e-6);
  EXPECT_TRUE(record.unknown_fields.empty());
}

TEST(InspectorRecord, ReadsNanBusbwAndSkipsP2pRecords) {
  std::string line = inspector_line("0xab", 0, 2, 1, 1, 8192, 1, 0);
  line.replace(line.find("\"coll_busbw_gbs\":"), std::string::npos, "\"coll_busbw_gbs\":\"nan\"}}");
  const auto nan = parse_inspector_line(line);
  ASSERT_TRUE(nan.ok()) << nan.error();
  EXPECT_TRUE(std::isnan((*nan)->busbw_gbps));
  const auto p2p = parse_inspector_line(
      "{\"header\":{\"id\":\"0x1\",\"rank\":0,\"n_ranks\":2,\"nnodes\":1},\"metadata\":{},\"p2p_perf\":{"
      "\"p2p\":\"Send\"}}");
  ASSERT_TRUE(p2p.ok()) << p2p.error();
  EXPECT_FALSE(p2p->has_value());
}

TEST(InspectorRecord, NamesTheFieldThatIsWrong) {
  std::string line = inspector_line("0xab", 9, 8, 1, 1, 8192, 1, 1);
  const auto rank = parse_inspector_line(line);
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.error().find("header.rank"), std::string::npos) << rank.error();
  const auto cut = parse_inspector_line(inspector_line("0xab", 0, 8, 1, 1, 8192, 1, 1).substr(0, 120));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().find("truncated"), std::string::npos) << cut.error();
}

TEST(InspectorRecord, KnowsInspectorsFileNames) {
  EXPECT_TRUE(is_inspector_file_name("node-a-pid1639453.log"));
  EXPECT_FALSE(is_inspector_file_name("node-a-pid.log"));
  EXPECT_FALSE(is_inspector_file_name("nccl_inspector_metrics_GPU-0.prom"));
  EXPECT_FALSE(is_inspector_file_name("notes.txt"));
}

TEST(SizeBucket, PowersOfTwo) {
  EXPECT_EQ(size_bucket(0), 0);
  EXPECT_EQ(size_bucket(1), 0);
  EXPECT_EQ(size_bucket(1048576), 20);
  EXPECT_EQ(size_bucket(2097151), 20);
  EXPECT_EQ(size_bucket(2097152), 21);
  EXPECT_EQ(bucket_min_bytes(20), 1048576u);
  EXPECT_EQ(bucket_max_bytes(20), 2097151u);
}

TEST(BusbwHistogram, QuantilesWithinHalfABin) {
  BusbwHistogram histogram;
  for (int i = 1; i <= 100; ++i) histogram.add(double(i));
  histogram.add(std::nan(""));
  EXPECT_EQ(histogram.count(), 100u);
  EXPECT_EQ(histogram.nan_count(), 1u);
  const double half_bin = std::pow(10.0, 1.0 / (2 * BusbwHistogram::kBinsPerDecade));
  EXPECT_GT(*histogram.quantile(0.5), 50 / half_bin);
  EXPECT_LE(*histogram.quantile(0.5), 50 * half_bin * (1 + 1e-12));
  EXPECT_GT(*histogram.quantile(0.1), 10 / half_bin);
  EXPECT_LE(*histogram.quantile(0.1), 10 * half_bin * (1 + 1e-12));  // 10 is a bin's lower edge
  EXPECT_FALSE(BusbwHistogram().quantile(0.5).has_value());
}

TEST(ObserveReader, ReadsEveryRanksFileIntoCommunicatorsAndBuckets) {
  std::vector<std::string> problems;
  const ObservedJob job = read_fixture("job-2n2g", &problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(job.records, 4u * (12 * 3 + 12));
  EXPECT_EQ(job.hosts, (std::set<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(job.communicators.size(), 5u);
  const ObservedCommunicator& world = job.communicators.at("0x1a2b3c4d5e6f70");
  EXPECT_EQ(world.name, "world");
  EXPECT_EQ(world.n_ranks, 4);
  EXPECT_EQ(world.nnodes, 2);
  EXPECT_EQ(world.ranks.size(), 4u);
  EXPECT_EQ(world.matched, 24u);
  EXPECT_EQ(world.unmatched, 0u);
  const ObservedRow& all_reduce = world.rows.at({"all_reduce", 20});
  EXPECT_EQ(all_reduce.records, 48u);
  EXPECT_DOUBLE_EQ(all_reduce.exec_us, 48 * 30.0);
  // Inspector's all_gather size is one rank's part (1 MiB); nccl-tests' is the whole 4 MiB.
  EXPECT_TRUE(world.rows.contains({"all_gather", 22}));
  EXPECT_TRUE(job.communicators.at("0xc000000000000a").rows.contains({"all_reduce", 18}));
}

TEST(ObserveReader, CollectivesPastTheWindowAreUnmatched) {
  // Rank 0's 10 collectives before rank 1's: a window of 4 keeps the last 4 of rank 0's waiting;
  // the 6 dropped count once each, not again when rank 1's records of them arrive.
  ObserveAccumulator accumulator(4);
  for (int sn = 1; sn <= 10; ++sn)
    accumulator.add_line("a-pid1.log", sn, inspector_line("0x1", 0, 2, 1, sn, 8192, 10, 1, "a", 1));
  for (int sn = 1; sn <= 10; ++sn)
    accumulator.add_line("b-pid2.log", sn, inspector_line("0x1", 1, 2, 1, sn, 8192, 10, 1, "b", 2));
  const ObservedJob job = accumulator.finish();
  const ObservedCommunicator& communicator = job.communicators.at("0x1");
  EXPECT_EQ(communicator.matched, 4u);
  EXPECT_EQ(communicator.unmatched, 6u);
  EXPECT_EQ(job.records, 20u);
}

TEST(ObserveReader, EachBadInputIsOneLineNamingTheFileAndTheRestIsRead) {
  std::vector<std::string> problems;
  const InspectorFiles files = find_inspector_files(
      {kInspectorFixtures + "/bad", kInspectorFixtures + "/empty", kInspectorFixtures + "/none"});
  ObserveAccumulator accumulator;
  for (const std::string& problem : files.problems) accumulator.add_problem(problem);
  read_inspector_files(files.files, accumulator);
  const ObservedJob job = accumulator.finish();
  problems = accumulator.problems();
  const auto has = [&](const std::string& a, const std::string& b) {
    return std::count_if(problems.begin(), problems.end(), [&](const std::string& line) {
             return line.find(a) != std::string::npos && line.find(b) != std::string::npos;
           }) == 1;
  };
  EXPECT_TRUE(has("/empty: ", "no Inspector records"));
  EXPECT_TRUE(has("/none: ", "no such directory"));
  EXPECT_TRUE(has("node-x-pid1.log:2: ", "unknown field coll_perf.coll_algo_proto"));
  EXPECT_TRUE(has("node-x-pid1.log:3: ", "inspector_output_format_version v5.0"));
  EXPECT_TRUE(has("node-x-pid1.log:4: ", "truncated"));
  EXPECT_TRUE(has("node-y-pid2.log:1: ", "another job's"));
  EXPECT_EQ(problems.size(), 6u);
  // Read: node-x's lines 1 and 2 (rank 0), node-y's line 2 (rank 1).
  EXPECT_EQ(job.records, 3u);
  EXPECT_EQ(job.communicators.at("0xbad0000000000a").matched, 1u);
}

TEST(ObserveReader, ProblemsOfOneFileAreCappedThenCounted) {
  ObserveAccumulator accumulator;
  for (int line = 1; line <= 20; ++line) accumulator.add_line("junk-pid1.log", line, "not json");
  accumulator.finish();
  const auto& problems = accumulator.problems();
  ASSERT_EQ(problems.size(), std::size_t(ObserveAccumulator::kProblemsPerFile) + 1);
  EXPECT_EQ(problems.back(), "junk-pid1.log: 15 more bad records skipped");
}

}  // namespace
}  // namespace nccltune
