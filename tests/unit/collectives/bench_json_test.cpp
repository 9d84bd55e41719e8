#include "collectives/bench_json.h"

#include <gtest/gtest.h>

#include <limits>

#include <filesystem>
#include <string>

#include "collectives/nccl_tests_log.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

std::string read_fixture(const std::string& name) {
  const std::filesystem::path path = fixture("nccl-tests/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return read_file(path);
}

BenchResult sample_result() {
  BenchResult result;
  result.op = "all_reduce";
  result.ranks = 16;
  result.nodes = 2;
  result.dtype = "float";
  result.time_rule = "max";
  BenchRow row;
  row.bytes = 1048576;
  row.count = 262144;
  row.out_of_place = Measurement{27.8, 37.7, 66.0, 0};
  row.in_place = Measurement{27.5, 38.1, 66.8, std::nullopt};
  result.rows.push_back(row);
  row.bytes = 2097152;
  row.count = 524288;
  row.out_of_place = Measurement{40.25, 52.1, 97.69, 3};
  row.in_place.reset();
  result.rows.push_back(row);
  result.avg_busbw = 76.83;
  result.context.hosts = {"node01", "node02"};
  result.context.nccl_version = "2.28.9";
  result.context.argv = {"nccltune", "bench", "--op", "all_reduce"};
  result.context.env = {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}};
  return result;
}

void expect_same(const Measurement& a, const Measurement& b) {
  EXPECT_DOUBLE_EQ(a.time_us, b.time_us);
  EXPECT_DOUBLE_EQ(a.algbw, b.algbw);
  EXPECT_DOUBLE_EQ(a.busbw, b.busbw);
  EXPECT_EQ(a.wrong, b.wrong);
}

void expect_same(const BenchResult& a, const BenchResult& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.time_rule, b.time_rule);
  EXPECT_EQ(a.avg_busbw, b.avg_busbw);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    EXPECT_EQ(a.rows[i].bytes, b.rows[i].bytes);
    EXPECT_EQ(a.rows[i].count, b.rows[i].count);
    EXPECT_EQ(a.rows[i].type, b.rows[i].type);
    EXPECT_EQ(a.rows[i].redop, b.rows[i].redop);
    EXPECT_EQ(a.rows[i].root, b.rows[i].root);
    expect_same(a.rows[i].out_of_place, b.rows[i].out_of_place);
    ASSERT_EQ(a.rows[i].in_place.has_value(), b.rows[i].in_place.has_value());
    if (a.rows[i].in_place) expect_same(*a.rows[i].in_place, *b.rows[i].in_place);
  }
  EXPECT_EQ(a.context.hosts, b.context.hosts);
  EXPECT_EQ(a.context.nccl_version, b.context.nccl_version);
  EXPECT_EQ(a.context.cuda_driver, b.context.cuda_driver);
  EXPECT_EQ(a.context.argv, b.context.argv);
  EXPECT_EQ(a.context.env, b.context.env);
}

}  // namespace

TEST(BenchJson, FieldsFollowTheDesign) {
  const nlohmann::ordered_json json = bench_result_to_json(sample_result());
  EXPECT_EQ(json.begin().key(), "schema");
  EXPECT_EQ(json["schema"], "nccltune/bench/v1");
  EXPECT_EQ(json["op"], "all_reduce");
  EXPECT_EQ(json["ranks"], 16);
  EXPECT_EQ(json["nodes"], 2);
  EXPECT_EQ(json["dtype"], "float");
  EXPECT_EQ(json["time_rule"], "max");
  EXPECT_EQ(json["rows"][0]["bytes"], 1048576);
  EXPECT_EQ(json["rows"][0]["count"], 262144);
  EXPECT_EQ(json["rows"][0]["out_of_place"]["time_us"], 27.8);
  EXPECT_EQ(json["rows"][0]["out_of_place"]["algbw"], 37.7);
  EXPECT_EQ(json["rows"][0]["out_of_place"]["busbw"], 66.0);
  EXPECT_EQ(json["rows"][0]["out_of_place"]["wrong"], 0);
  EXPECT_TRUE(json["rows"][0]["in_place"]["wrong"].is_null());  // N/A
  EXPECT_TRUE(json["rows"][1]["in_place"].is_null());
  EXPECT_EQ(json["avg_busbw"], 76.83);
  EXPECT_EQ(json["context"]["hosts"], nlohmann::ordered_json({"node01", "node02"}));
  EXPECT_EQ(json["context"]["nccl_version"], "2.28.9");
  EXPECT_EQ(json["context"]["env"]["NCCL_ALGO"], "Ring");
  EXPECT_TRUE(json["context"]["cuda_driver"].is_null());
}

TEST(BenchJson, UnknownsAreNull) {
  BenchResult result;
  result.rows.push_back(BenchRow{});
  const nlohmann::ordered_json json = bench_result_to_json(result);
  EXPECT_TRUE(json["ranks"].is_null());
  EXPECT_TRUE(json["nodes"].is_null());
  EXPECT_TRUE(json["avg_busbw"].is_null());
  EXPECT_TRUE(json["rows"][0]["out_of_place"]["wrong"].is_null());
  EXPECT_TRUE(json["context"]["nccl_version"].is_null());
}

TEST(BenchJson, RoundTrip) {
  const BenchResult original = sample_result();
  const Result<BenchResult> back = parse_bench_json(bench_result_to_json(original).dump(2), "mem");
  ASSERT_TRUE(back.ok()) << back.error();
  expect_same(original, *back);
  EXPECT_EQ(bench_result_to_json(*back), bench_result_to_json(original));
}

TEST(BenchJson, RoundTripOfAnImportedLog) {
  const Result<BenchResult> imported =
      parse_nccl_tests_log(read_fixture("alltoall-8rank-wrong-data.txt"), "alltoall");
  ASSERT_TRUE(imported.ok()) << imported.error();
  const Result<BenchResult> back = bench_result_from_json(bench_result_to_json(*imported), "mem");
  ASSERT_TRUE(back.ok()) << back.error();
  expect_same(*imported, *back);

  const Result<BenchResult> unknown_ranks =
      parse_nccl_tests_log(read_fixture("all-reduce-last-rank-line-only.txt"), "last-rank");
  ASSERT_TRUE(unknown_ranks.ok()) << unknown_ranks.error();
  const nlohmann::ordered_json json = bench_result_to_json(*unknown_ranks);
  EXPECT_TRUE(json["ranks"].is_null());
  const Result<BenchResult> back_unknown = bench_result_from_json(json, "mem");
  ASSERT_TRUE(back_unknown.ok()) << back_unknown.error();
  EXPECT_FALSE(back_unknown->ranks.has_value());
}

TEST(BenchJson, ReadsTheDesignExample) {
  const char* example =
      R"({"schema": "nccltune/bench/v1", "op": "all_reduce", "ranks": 16, "nodes": 2, "dtype": "float",
 "rows": [{"bytes": 1048576, "count": 262144,
           "out_of_place": {"time_us": 27.8, "algbw": 37.7, "busbw": 66.0, "wrong": 0},
           "in_place":     {"time_us": 27.5, "algbw": 38.1, "busbw": 66.8, "wrong": 0}}],
 "avg_busbw": 100.95,
 "context": {"hosts": ["node01", "node02"], "nccl_version": "2.28.9", "argv": ["..."], "env": {"NCCL_ALGO": "Ring"}}})";
  const Result<BenchResult> result = parse_bench_json(example, "design");
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->ranks, 16);
  ASSERT_EQ(result->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(result->rows[0].in_place->busbw, 66.8);
  EXPECT_EQ(result->context.env.at("NCCL_ALGO"), "Ring");
}

TEST(BenchJson, ErrorsNameTheField) {
  nlohmann::ordered_json json = bench_result_to_json(sample_result());
  json["rows"][1]["out_of_place"]["busbw"] = "fast";
  Result<BenchResult> result = bench_result_from_json(json, "bench.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), "bench.json: rows[1].out_of_place.busbw: not a number");

  json = bench_result_to_json(sample_result());
  json["rows"][0].erase("bytes");
  result = bench_result_from_json(json, "bench.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), "bench.json: rows[0].bytes: missing");

  json = bench_result_to_json(sample_result());
  json["schema"] = "nccltune/bench/v2";
  result = bench_result_from_json(json, "bench.json");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("schema"), std::string::npos);

  result = parse_bench_json("{\"schema\": ", "broken.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), "broken.json: not valid JSON");
}

// A number beyond a double: nlohmann/json refuses the literal (1e999, NaN) when it parses the
// text, and the reader refuses an infinity or NaN in a document built in memory.
TEST(BenchJson, NonFiniteNumbersAreRefused) {
  for (const double bad : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    nlohmann::ordered_json json = bench_result_to_json(sample_result());
    json["rows"][1]["out_of_place"]["busbw"] = bad;
    Result<BenchResult> result = bench_result_from_json(json, "bench.json");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error(), "bench.json: rows[1].out_of_place.busbw: not a number");
    json = bench_result_to_json(sample_result());
    json["avg_busbw"] = bad;
    result = bench_result_from_json(json, "bench.json");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error(), "bench.json: avg_busbw: not a number");
  }
  std::string text = bench_result_to_json(sample_result()).dump();
  const std::string busbw = "\"busbw\":";
  for (const std::string literal : {"1e999", "NaN"}) {
    std::string changed = text;
    changed.insert(changed.find(busbw) + busbw.size(), literal + ",\"x\":");
    const Result<BenchResult> result = parse_bench_json(changed, "bench.json");
    ASSERT_FALSE(result.ok()) << literal;
    EXPECT_EQ(result.error(), "bench.json: not valid JSON") << literal;
  }
}
