#include "collectives/nccl_tests_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "collectives/bench_json.h"
#include "nccl_tests_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::has_note;
using nccltune::test_support::read_nccl_tests_fixture;

namespace {

// The pairs: console output and -J file of one run (tests/fixtures/nccl-tests/generate_json_pairs.py).
constexpr const char* kPerIterationPair = "all-reduce-2.19.6-per-iter-json-pair";
constexpr const char* kAlltoallvPair = "alltoallv-2.19.6-summary-json-pair";

NcclTestsLog read_fixture_output(const std::string& name) {
  Result<NcclTestsLog> log = read_nccl_tests_output(read_nccl_tests_fixture(name), name);
  EXPECT_TRUE(log.ok()) << log.error();
  return log.ok() ? log.value() : NcclTestsLog{};
}

// A value as nccl-tests' table prints it (src/util.cu getFloatStr): 2, 1, then 0 decimals to fit
// the width, else %.1e.
std::string as_printed(double value, int width) {
  for (const char* format : {"{:{}.2f}", "{:{}.1f}", "{:{}.0f}"}) {
    const std::string text = fmt::format(fmt::runtime(format), value, width);
    if (static_cast<int>(text.size()) <= width) return text;
  }
  return fmt::format("{:{}.1e}", value, width);
}

std::string printed_measurement(const Measurement& m) {
  return fmt::format("{} {} {} {}", as_printed(m.time_us, 7), as_printed(m.algbw, 6), as_printed(m.busbw, 6),
                     m.wrong ? std::to_string(*m.wrong) : "N/A");
}

std::string printed_row(const BenchRow& row) {
  return fmt::format("{} {} {} {} {} | {} | {}", row.bytes, row.count, row.type, row.redop, row.root,
                     printed_measurement(row.out_of_place),
                     row.in_place ? printed_measurement(*row.in_place) : "none");
}

// `import` of the -J file gives the rows of the console output of the same run: the same sizes,
// counts, types, redops, roots and wrong counts, and times and bandwidths that print as the table
// printed them (the file keeps 6 decimals, the table 2).
void expect_same_run(const std::string& stem) {
  const NcclTestsLog text = read_fixture_output(stem + ".txt");
  const NcclTestsLog json = read_fixture_output(stem + ".json");
  EXPECT_EQ(text.format, "nccl-tests");
  EXPECT_EQ(json.format, "nccl-tests-json");
  const BenchResult& a = text.bench;
  const BenchResult& b = json.bench;
  EXPECT_EQ(a.op, b.op);
  EXPECT_FALSE(text.op_assumed || json.op_assumed);
  ASSERT_TRUE(a.ranks.has_value());
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.context.hosts, b.context.hosts);
  EXPECT_EQ(a.context.nccl_version, b.context.nccl_version);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.time_rule, b.time_rule);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) EXPECT_EQ(printed_row(a.rows[i]), printed_row(b.rows[i])) << i;
  ASSERT_TRUE(a.avg_busbw && b.avg_busbw);
  EXPECT_EQ(fmt::format("{:g}", *a.avg_busbw), fmt::format("{:g}", *b.avg_busbw));  // "%g" in the footer
  // Both reproduce their own arithmetic, the file to its finer precision.
  EXPECT_TRUE(check_bus_bandwidth(a, text.time_step_us).empty());
  EXPECT_TRUE(check_bus_bandwidth(b, json.time_step_us).empty());
  EXPECT_TRUE(check_average_bus_bandwidth(b)->agrees);
}

}  // namespace

TEST(NcclTestsJson, PerIterationRunGivesTheRowsOfItsConsoleOutput) {
  expect_same_run(kPerIterationPair);
  const NcclTestsLog json = read_fixture_output(std::string(kPerIterationPair) + ".json");
  EXPECT_EQ(json.bench.op, "all_reduce");
  EXPECT_EQ(json.bench.ranks, 8);
  EXPECT_EQ(json.bench.nodes, 2);
  EXPECT_EQ(json.bench.context.nccl_version, "2.28.3");
  EXPECT_EQ(json.bench.rows.size(), 13u);
  EXPECT_EQ(json.bench.rows.front().root, -1);  // written as the string "    -1"
  EXPECT_TRUE(has_note(json, "per-iteration statistics (-I 1"));
  EXPECT_TRUE(has_note(json, "time_rule avg assumed"));
  EXPECT_EQ(json.bench.context.argv.front(), "./build/all_reduce_perf");  // "\/" unescaped
}

TEST(NcclTestsJson, AlltoallvRunGivesTheRowsOfItsConsoleOutputWithItsSummary) {
  expect_same_run(kAlltoallvPair);
  const NcclTestsLog json = read_fixture_output(std::string(kAlltoallvPair) + ".json");
  EXPECT_EQ(json.bench.op, "alltoallv");
  EXPECT_EQ(json.bench.time_rule, "max");  // -a 3 in args
  ASSERT_EQ(json.bench.rows.size(), 5u);
  EXPECT_FALSE(json.bench.rows.front().in_place->wrong.has_value());  // nwrong null: not checked
}

TEST(NcclTestsJson, KeepsOnlyTheNcclVariablesOfTheEnvironment) {
  const NcclTestsLog json = read_fixture_output(std::string(kPerIterationPair) + ".json");
  const std::map<std::string, std::string> expected = {{"NCCL_IB_HCA", "mlx5_0,mlx5_3"},
                                                       {"NCCL_SOCKET_IFNAME", "bond0"}};
  EXPECT_EQ(json.bench.context.env, expected);  // not HOME, PATH or MY_API_TOKEN
  const std::string dumped = bench_result_to_json(json.bench).dump();
  EXPECT_EQ(dumped.find("do-not-copy"), std::string::npos);
}

TEST(NcclTestsJson, VersionOneWithItsMisspelledAverageAndOneProcessOfEightGpus) {
  const NcclTestsLog json = read_fixture_output("all-gather-2.17.3-v1.json");
  const BenchResult& bench = json.bench;
  EXPECT_EQ(bench.op, "all_gather");
  EXPECT_EQ(bench.ranks, 8);  // one config.devices entry x ngpus 8
  EXPECT_EQ(bench.nodes, 1);
  EXPECT_EQ(bench.context.hosts, std::vector<std::string>{"gpu-17"});
  EXPECT_EQ(bench.context.nccl_version, "2.21.5");
  ASSERT_TRUE(bench.avg_busbw.has_value());  // "average_bus_bandwidith": {"bandwidith": ...}
  EXPECT_TRUE(check_average_bus_bandwidth(bench)->agrees);
  EXPECT_TRUE(check_bus_bandwidth(bench, json.time_step_us).empty());
  EXPECT_EQ(bench.rows.size(), 7u);
}

TEST(NcclTestsJson, BadFilesGetOneLineNamingTheFileAndTheField) {
  const std::string good = read_nccl_tests_fixture("all-gather-2.17.3-v1.json");
  auto error_of = [](const std::string& text) {
    const Result<NcclTestsLog> log = read_nccl_tests_json(text, "run.json");
    EXPECT_FALSE(log.ok());
    const std::string error = log.ok() ? std::string() : log.error();
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    return error;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  EXPECT_EQ(error_of(replaced("\"bus_bw\":", "\"bus_bw\":\"fast\",\"x\":")),
            "run.json: results[0].out_of_place.bus_bw: not a number");
  EXPECT_EQ(error_of(replaced("\"results\":", "\"rezults\":")), "run.json: results: missing");
  EXPECT_EQ(error_of(replaced("\"size\":1048576", "\"size\":-1.5")), "run.json: results[0].size: not an integer");
  EXPECT_EQ(error_of(replaced("\"root\":\"    -1\"", "\"root\":\"none\"")), "run.json: results[0].root: not a rank");
  EXPECT_EQ(error_of(replaced("\"hostname\":\"gpu-17\"", "\"hostname\":17")),
            "run.json: config.devices[0].hostname: not a string");
  EXPECT_EQ(error_of(replaced("\"version\":1", "\"version\":\"1\"")), "run.json: version: not an integer");
  EXPECT_EQ(error_of("[1, 2]"), "run.json: not a JSON object (nccl-tests -J writes one)");
  // nccl-tests prints an infinite value as a bare inf ("%lf"), which no JSON reader takes.
  const std::string infinite = error_of(replaced("\"alg_bw\":", "\"alg_bw\":inf,\"y\":"));
  EXPECT_EQ(infinite.rfind("run.json: not valid JSON: parse error at line 1, column ", 0), 0u) << infinite;
  EXPECT_EQ(error_of(good.substr(0, good.size() / 2)).rfind("run.json: not valid JSON: ", 0), 0u);  // cut short
}

TEST(NcclTestsJson, RowsWithNanOrImpossibleSizesAreDroppedAndNamed) {
  std::string text = read_nccl_tests_fixture("all-gather-2.17.3-v1.json");
  const std::size_t first_time = text.find("\"time\":");
  text.replace(first_time, std::string("\"time\":").size(), "\"time\":\"nan\",\"t\":");
  const std::size_t size = text.find("\"size\":2097152");
  text.replace(size, std::string("\"size\":2097152").size(), "\"size\":2251799813685248");  // 2 PiB
  const Result<NcclTestsLog> log = read_nccl_tests_json(text, "run.json");
  ASSERT_TRUE(log.ok()) << log.error();
  EXPECT_EQ(log->bench.rows.size(), 5u);
  EXPECT_TRUE(has_note(*log, "dropped the row results[0].out_of_place.time: nan"));
  EXPECT_TRUE(has_note(*log, "dropped the row results[1]: size 2251799813685248 is beyond 1 PiB"));
}

TEST(NcclTestsJson, EveryRowDroppedIsAnError) {
  const Result<NcclTestsLog> log =
      read_nccl_tests_json(R"({"version":3,"results":[{"size":8,"count":2,"type":"float","redop":"sum",)"
                           R"("root":"    -1","out_of_place":null}]})",
                           "run.json");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.error(), "run.json: results: no rows (dropped results[0]: no out-of-place measurement)");
}

TEST(NcclTestsJson, OutputsAreToldApartByTheirFirstCharacter) {
  EXPECT_TRUE(is_nccl_tests_json("\n  {\"version\":3}"));
  EXPECT_FALSE(is_nccl_tests_json("# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n"));
  EXPECT_FALSE(is_nccl_tests_json(""));
  EXPECT_EQ(read_fixture_output(std::string(kAlltoallvPair) + ".txt").format, "nccl-tests");
  EXPECT_EQ(read_fixture_output(std::string(kAlltoallvPair) + ".json").format, "nccl-tests-json");
}

TEST(NcclTestsJson, NonFiniteNumbersAreRefused) {
  const std::string good = read_nccl_tests_fixture("all-gather-2.17.3-v1.json");
  for (const std::string literal : {"1e999", "-1e999", "NaN"}) {
    std::string text = good;
    text.replace(text.find("\"bus_bw\":"), std::string("\"bus_bw\":").size(), "\"bus_bw\":" + literal + ",\"x\":");
    const Result<NcclTestsLog> log = read_nccl_tests_json(text, "run.json");
    ASSERT_FALSE(log.ok()) << literal;
    EXPECT_EQ(log.error().rfind("run.json: not valid JSON: ", 0), 0u) << log.error();
    EXPECT_EQ(log.error().find('\n'), std::string::npos) << log.error();
  }
}
