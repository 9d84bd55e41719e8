#include "collectives/nccl_tests_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "collectives/bench_json.h"
#include "collectives/nccl_tests_json.h"
#include "nccl_tests_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::has_note;
using nccltune::test_support::read_nccl_tests_fixture;

namespace {

NcclTestsLog read_fixture_log(const std::string& name) {
  Result<NcclTestsLog> log = read_nccl_tests_log(read_nccl_tests_fixture(name), name);
  EXPECT_TRUE(log.ok()) << log.error();
  return log.ok() ? log.value() : NcclTestsLog{};
}

std::string notes_of(const NcclTestsLog& log) {
  std::string all;
  for (const std::string& note : log.notes) all += note + "\n";
  return all;
}

}  // namespace

TEST(NcclTestsLog, OldTableWithoutRootAndWithErrorColumn) {
  const NcclTestsLog log = read_fixture_log("all-reduce-2021-error-column.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.op, "all_reduce");  // from the mpirun line
  EXPECT_FALSE(log.op_assumed);
  EXPECT_EQ(bench.ranks, 8);
  EXPECT_EQ(bench.nodes, 1);
  EXPECT_EQ(bench.context.hosts, std::vector<std::string>{"dgx-a100-01"});
  EXPECT_EQ(bench.context.argv.front(), "mpirun");
  EXPECT_EQ(bench.context.argv.back(), "1");
  EXPECT_EQ(bench.dtype, "float");
  ASSERT_EQ(bench.rows.size(), 7u);
  const BenchRow& first = bench.rows.front();
  EXPECT_EQ(first.bytes, 8);
  EXPECT_EQ(first.count, 2);
  EXPECT_EQ(first.redop, "sum");
  EXPECT_EQ(first.root, -1);  // no root column
  EXPECT_DOUBLE_EQ(first.out_of_place.time_us, 11.63);
  EXPECT_FALSE(first.out_of_place.wrong.has_value());  // "error" is a deviation, not a count
  const BenchRow& last = bench.rows.back();
  EXPECT_EQ(last.bytes, 2097152);
  EXPECT_DOUBLE_EQ(last.out_of_place.busbw, 131.86);
  ASSERT_TRUE(last.in_place.has_value());
  EXPECT_DOUBLE_EQ(last.in_place->time_us, 27.55);
  EXPECT_DOUBLE_EQ(last.in_place->algbw, 76.12);
  EXPECT_TRUE(has_note(log, "'error' column")) << notes_of(log);
  EXPECT_EQ(bench.avg_busbw, 24.5719);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());
}

TEST(NcclTestsLog, NewestTableWithNotAvailableWrongAndPciIds) {
  const NcclTestsLog log = read_fixture_log("all-reduce-2.19-check-off.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.op, "all_reduce");  // from "# Collective test starting: all_reduce_perf"
  EXPECT_FALSE(log.op_assumed);
  EXPECT_EQ(bench.ranks, 16);
  EXPECT_EQ(bench.nodes, 2);
  EXPECT_EQ(bench.context.hosts, (std::vector<std::string>{"gpu-node-01", "gpu-node-02"}));
  EXPECT_EQ(bench.context.nccl_version, "2.28.3");
  EXPECT_EQ(bench.context.env.at("NCCL_IB_HCA"), "mlx5_0,mlx5_3,mlx5_4,mlx5_5");
  EXPECT_EQ(bench.context.env.at("NCCL_SOCKET_IFNAME"), "bond0");
  EXPECT_EQ(bench.context.argv.front(), "srun");
  ASSERT_EQ(bench.rows.size(), 5u);
  for (const BenchRow& row : bench.rows) {
    EXPECT_FALSE(row.out_of_place.wrong.has_value()) << row.bytes;
    EXPECT_FALSE(row.in_place->wrong.has_value()) << row.bytes;
  }
  EXPECT_DOUBLE_EQ(bench.rows[2].out_of_place.time_us, 17132.9);
  EXPECT_EQ(bench.rows.back().bytes, 17179869184);
  EXPECT_EQ(bench.avg_busbw, 470.652);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());
}

TEST(NcclTestsLog, AlltoallWithWrongDataAndCommandLineEnvironment) {
  const NcclTestsLog log = read_fixture_log("alltoall-8rank-wrong-data.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.op, "alltoall");
  EXPECT_EQ(bench.ranks, 8);
  EXPECT_EQ(bench.context.hosts, std::vector<std::string>{"dgx-h100-7"});
  EXPECT_EQ(bench.context.env.at("NCCL_IB_QPS_PER_CONNECTION"), "4");
  EXPECT_EQ(bench.context.argv.back(), "4");  // stops before "2>&1 | tee alltoall.log"
  ASSERT_EQ(bench.rows.size(), 4u);
  EXPECT_EQ(bench.rows[0].redop, "none");
  EXPECT_EQ(bench.rows[0].count, 32768);  // per rank: 1 MiB / 4 B / 8 ranks
  EXPECT_EQ(bench.rows[2].out_of_place.wrong, 0);
  EXPECT_EQ(bench.rows[2].in_place->wrong, 1024);
  EXPECT_TRUE(has_note(log, "1 out-of-bounds values (FAILED)")) << notes_of(log);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());  // factor 7/8
}

TEST(NcclTestsLog, AllGatherRankCountFromCountColumnWhenRankListIsElided) {
  const NcclTestsLog log = read_fixture_log("all-gather-rank-list-elided.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.op, "all_gather");
  EXPECT_EQ(bench.ranks, 32);  // 33554432 B = 262144 elements x 4 B x 32 ranks
  EXPECT_FALSE(bench.nodes.has_value());
  EXPECT_TRUE(bench.context.hosts.empty());
  EXPECT_TRUE(has_note(log, "from the table")) << notes_of(log);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());
}

TEST(NcclTestsLog, RankCountUnknownWhenOnlyTheLastRankLineIsShown) {
  const NcclTestsLog log = read_fixture_log("all-reduce-last-rank-line-only.txt");
  const BenchResult& bench = log.bench;
  EXPECT_FALSE(bench.ranks.has_value());
  EXPECT_FALSE(bench.nodes.has_value());
  EXPECT_EQ(bench.context.hosts, std::vector<std::string>{"h100-a-004"});
  EXPECT_EQ(bench.context.nccl_version, "2.21.5");
  EXPECT_EQ(bench.op, "all_reduce");
  EXPECT_TRUE(log.op_assumed);
  EXPECT_EQ(bench.rows.size(), 5u);  // MACHINEFILE, host names and the trailer are not rows
  EXPECT_TRUE(has_note(log, "at least 32 ranks")) << notes_of(log);
  EXPECT_TRUE(has_note(log, "rank count unknown")) << notes_of(log);
  EXPECT_TRUE(has_note(log, "inferred, not stated in the log")) << notes_of(log);
  EXPECT_TRUE(has_note(log, "all_reduce gives for 32 ranks")) << notes_of(log);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());  // nothing to check against

  const auto factor = implied_bus_factor(bench);
  ASSERT_TRUE(factor.has_value());
  const auto range = ranks_with_bus_factor("all_reduce", *factor);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->fewest, 32);
  EXPECT_EQ(range->most, 32);
}

TEST(NcclTestsLog, DoctoredBusBandwidthIsReported) {
  const NcclTestsLog log = read_fixture_log("all-reduce-doctored-busbw.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.ranks, 4);
  const auto disagreements = check_bus_bandwidth(bench);
  ASSERT_EQ(disagreements.size(), 1u);
  EXPECT_EQ(disagreements[0].bytes, 16777216);
  EXPECT_FALSE(disagreements[0].in_place);
  EXPECT_DOUBLE_EQ(disagreements[0].printed, 179.65);
  EXPECT_NEAR(disagreements[0].recomputed, 16777216 / 154.1e3 * 1.5, 1e-9);
  // The printed average was computed before the edit.
  const auto average = check_average_bus_bandwidth(bench);
  ASSERT_TRUE(average.has_value());
  EXPECT_FALSE(average->agrees);
}

TEST(NcclTestsLog, SeventeenEraTableInMilliseconds) {
  const NcclTestsLog log = read_fixture_log("all-reduce-2017-ms.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.ranks, 4);  // "#   Rank  0 on host device ..." without Group and Pid
  EXPECT_EQ(bench.context.hosts, std::vector<std::string>{"pascal-box"});
  ASSERT_EQ(bench.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(bench.rows[0].out_of_place.time_us, 77);
  EXPECT_EQ(bench.rows[0].redop, "sum");
  EXPECT_EQ(bench.avg_busbw, 24.5838);
  EXPECT_DOUBLE_EQ(log.time_step_us, 1);
  EXPECT_TRUE(check_bus_bandwidth(bench, log.time_step_us).empty());
  EXPECT_FALSE(check_bus_bandwidth(bench).empty());  // 0.01 us steps would be too strict here
}

TEST(NcclTestsLog, EveryFixtureReproducesItsPrintedAverage) {
  // Ours and the published logs (published/) alike, console tables and -J files.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(fixture("nccl-tests"))) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".txt" && extension != ".json")) continue;
    const std::string name = std::filesystem::relative(entry.path(), fixture("nccl-tests")).string();
    if (name == "all-reduce-doctored-busbw.txt") continue;
    const Result<NcclTestsLog> read = read_nccl_tests_output(read_nccl_tests_fixture(name), name);
    ASSERT_TRUE(read.ok()) << read.error();
    const NcclTestsLog& log = *read;
    const auto average = check_average_bus_bandwidth(log.bench);
    ASSERT_TRUE(average.has_value()) << name;
    EXPECT_TRUE(average->agrees) << name << ": printed " << average->printed << ", recomputed "
                                 << average->recomputed << ", tolerance " << average->tolerance;
  }
}

TEST(NcclTestsLog, PerIterationColumnsAreReadPast) {
  // -I 1 adds i_min i_max i_p99 i_cv% after each measurement; -R 2 (on its command line) adds none.
  const NcclTestsLog log = read_fixture_log("all-reduce-2.19.6-per-iter-json-pair.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.ranks, 8);
  ASSERT_EQ(bench.rows.size(), 13u);
  const BenchRow& last = bench.rows.back();
  EXPECT_EQ(last.bytes, 134217728);
  EXPECT_DOUBLE_EQ(last.out_of_place.time_us, 1440.37);
  EXPECT_DOUBLE_EQ(last.out_of_place.busbw, 163.07);
  EXPECT_EQ(last.out_of_place.wrong, 0);
  ASSERT_TRUE(last.in_place.has_value());
  EXPECT_DOUBLE_EQ(last.in_place->time_us, 1443.20);  // after the out-of-place i_* columns
  EXPECT_DOUBLE_EQ(last.in_place->busbw, 162.75);
  EXPECT_TRUE(has_note(log, "per-iteration columns (-I 1")) << notes_of(log);
  EXPECT_FALSE(has_note(log, "dropped")) << notes_of(log);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());
}

TEST(NcclTestsLog, AlltoallvSummaryLinesAreSkippedAndTheRowsTheyBrokeJoined) {
  // NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1 prints its per-rank lines inside each row, twice.
  const NcclTestsLog log = read_fixture_log("alltoallv-2.19.6-summary-json-pair.txt");
  const BenchResult& bench = log.bench;
  EXPECT_EQ(bench.op, "alltoallv");
  EXPECT_EQ(bench.ranks, 4);
  EXPECT_EQ(bench.time_rule, "max");
  ASSERT_EQ(bench.rows.size(), 5u);
  const BenchRow& first = bench.rows.front();
  EXPECT_EQ(first.bytes, 1048560);  // the busiest rank's bytes, 16-byte aligned per peer
  EXPECT_EQ(first.count, 65536);
  EXPECT_EQ(first.redop, "none");
  EXPECT_DOUBLE_EQ(first.out_of_place.time_us, 35.58);
  EXPECT_EQ(first.out_of_place.wrong, 0);
  ASSERT_TRUE(first.in_place.has_value());
  EXPECT_DOUBLE_EQ(first.in_place->time_us, 34.66);
  EXPECT_FALSE(first.in_place->wrong.has_value());  // in-place alltoallv is not checked: N/A
  EXPECT_TRUE(has_note(log, "skipped 10 alltoallv per-rank summaries")) << notes_of(log);
  EXPECT_FALSE(has_note(log, "dropped")) << notes_of(log);
  EXPECT_DOUBLE_EQ(nccl_tests_bus_factor("alltoallv", 4), 0.75);
  EXPECT_TRUE(check_bus_bandwidth(bench).empty());  // busbw = algbw x (n-1)/n
}

TEST(NcclTestsLog, AlltoallvRowWhoseSummaryEndsEarlyIsDropped) {
  std::string text = read_nccl_tests_fixture("alltoallv-2.19.6-summary-json-pair.txt");
  const std::size_t rank3 = text.find("#   rank=3");  // the first row's first summary loses a line
  text.erase(rank3, text.find('\n', rank3) + 1 - rank3);
  const NcclTestsLog log = read_nccl_tests_log(text, "cut.txt").value();
  EXPECT_EQ(log.bench.rows.size(), 4u);
  EXPECT_TRUE(has_note(log, "dropped the row on line 16: an alltoallv summary broke it")) << notes_of(log);
}

TEST(NcclTestsLog, WindowsLineEndingsReadTheSame) {
  std::string text = read_nccl_tests_fixture("all-reduce-2.19-check-off.txt");
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const Result<BenchResult> unix_result = parse_nccl_tests_log(text, "unix");
  const Result<BenchResult> windows_result = parse_nccl_tests_log(crlf, "windows");
  ASSERT_TRUE(unix_result.ok() && windows_result.ok());
  EXPECT_EQ(windows_result->rows.size(), unix_result->rows.size());
  EXPECT_EQ(windows_result->ranks, unix_result->ranks);
  EXPECT_EQ(windows_result->context.hosts, unix_result->context.hosts);
}

// fuzz_nccl_tests_log found `nccltune import` aborting on a host name that is not UTF-8: the JSON
// writer throws on it. Such bytes are read as '?'.
TEST(NcclTestsLog, InvalidUtf8IsReadAsQuestionMarks) {
  std::string text = read_nccl_tests_fixture("all-reduce-2.19-check-off.txt");
  const std::size_t host = text.find("gpu-node-01");
  ASSERT_NE(host, std::string::npos);
  text.replace(host, 3, "g\xff\xc0");
  const Result<BenchResult> result = parse_nccl_tests_log(text, "bad.log");
  ASSERT_TRUE(result.ok()) << result.error();
  ASSERT_FALSE(result->context.hosts.empty());
  EXPECT_EQ(result->context.hosts[0], "g?\?-node-01");
  EXPECT_NO_THROW((void)bench_result_to_json(*result).dump());
}

TEST(NcclTestsLog, RankCountFromLauncherLineWhenThereAreNoRankLines) {
  const std::string text =
      "mpirun -np 2 --map-by ppr:1:node ./build/all_reduce_perf -b 1M -e 1M -g 4\n"
      "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 1048576(bytes) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  busbw #wrong\n"
      "     1048576        262144     float     sum      -1    50.00   20.97   36.70      0    50.00   20.97 "
      "  36.70      0\n";
  const Result<NcclTestsLog> log = read_nccl_tests_log(text, "inline");
  ASSERT_TRUE(log.ok()) << log.error();
  EXPECT_EQ(log->bench.ranks, 8);  // 2 processes x 4 GPUs
  EXPECT_FALSE(log->bench.nodes.has_value());
  EXPECT_TRUE(has_note(*log, "from the command line")) << notes_of(*log);
  EXPECT_TRUE(check_bus_bandwidth(log->bench).empty());
  EXPECT_FALSE(log->bench.avg_busbw.has_value());
}

TEST(NcclTestsLog, SingleProcessCommandWithEnvironmentPrefix) {
  const std::string text =
      "NCCL_DEBUG=INFO NCCL_ALGO=Tree ./build/all_reduce_perf -b 1M -e 1M -g8\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n"
      "     1048576        262144     float     sum      -1    50.00   20.97   36.70      0    50.00   20.97 "
      "  "
      "36.70      0\n";
  const Result<NcclTestsLog> log = read_nccl_tests_log(text, "inline");
  ASSERT_TRUE(log.ok()) << log.error();
  EXPECT_EQ(log->bench.op, "all_reduce");
  EXPECT_EQ(log->bench.ranks, 8);  // one process, -g8
  EXPECT_EQ(log->bench.context.env.at("NCCL_ALGO"), "Tree");
  EXPECT_TRUE(check_bus_bandwidth(log->bench).empty());

  // A shell assignment that names the program does not run it.
  const std::string assignment = "CMD=./build/all_gather_perf\n" + text.substr(text.find('\n') + 1);
  const Result<NcclTestsLog> not_run = read_nccl_tests_log(assignment, "inline");
  ASSERT_TRUE(not_run.ok()) << not_run.error();
  EXPECT_TRUE(not_run->op_assumed);
  EXPECT_FALSE(not_run->bench.ranks.has_value());
}

TEST(NcclTestsLog, OpUnknownWhenNothingNamesItAndNothingIsReduced) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  busbw #wrong\n"
      "     1048576         32768     float    none      -1    30.00   34.95   30.58      0    30.00   34.95 "
      "  30.58      0\n";
  const Result<NcclTestsLog> log = read_nccl_tests_log(text, "inline");
  ASSERT_TRUE(log.ok()) << log.error();
  EXPECT_EQ(log->bench.op, "unknown");
  EXPECT_TRUE(log->op_assumed);
  EXPECT_FALSE(log->bench.ranks.has_value());
}

TEST(NcclTestsLog, ErrorsNameTheOrigin) {
  const Result<NcclTestsLog> empty = read_nccl_tests_log("", "empty.txt");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("empty.txt"), std::string::npos);
  EXPECT_NE(empty.error().find("no nccl-tests table"), std::string::npos);

  const Result<BenchResult> header_only = parse_nccl_tests_log(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  busbw #wrong\n"
      "# Out of bounds values : 0 OK\n",
      "header-only.txt");
  ASSERT_FALSE(header_only.ok());
  EXPECT_NE(header_only.error().find("header-only.txt: the nccl-tests table has no rows"), std::string::npos);
}

TEST(NcclTestsChecks, AverageIsTheMeanOfEveryBusBandwidth) {
  BenchResult result;
  BenchRow row;
  row.out_of_place.busbw = 10;
  row.in_place = Measurement{};
  row.in_place->busbw = 20;
  result.rows.push_back(row);
  row.out_of_place.busbw = 30;
  row.in_place.reset();
  result.rows.push_back(row);
  EXPECT_DOUBLE_EQ(average_bus_bandwidth(result).value(), 20);
  EXPECT_FALSE(average_bus_bandwidth(BenchResult{}).has_value());
  EXPECT_FALSE(check_average_bus_bandwidth(result).has_value());  // nothing printed to compare
  result.avg_busbw = 20.0001;
  EXPECT_TRUE(check_average_bus_bandwidth(result)->agrees);
  result.avg_busbw = 20.1;
  EXPECT_FALSE(check_average_bus_bandwidth(result)->agrees);
}

TEST(NcclTestsChecks, RankCountsFromBusFactor) {
  const auto sixteen = ranks_with_bus_factor("all_reduce", {1.87492, 1.87504});
  ASSERT_TRUE(sixteen.has_value());
  EXPECT_EQ(sixteen->fewest, 16);
  EXPECT_EQ(sixteen->most, 16);
  const auto eight = ranks_with_bus_factor("all_gather", {0.8749, 0.8751});
  ASSERT_TRUE(eight.has_value());
  EXPECT_EQ(eight->fewest, 8);
  const auto none = ranks_with_bus_factor("all_reduce", {1.81, 1.815});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->fewest, 0);
  const auto wide = ranks_with_bus_factor("all_reduce", {1.9895, 2.0});
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->fewest, 191);  // 2 x 190 / 191 = 1.98953
  EXPECT_TRUE(wide->open_ended);
  EXPECT_FALSE(ranks_with_bus_factor("broadcast", {0.99, 1.01}).has_value());
  EXPECT_FALSE(ranks_with_bus_factor("unknown", {0.99, 1.01}).has_value());
}
