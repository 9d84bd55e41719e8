#include "collectives/bench_table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "collectives/nccl_tests_log.h"
#include "golden.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::expect_golden;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

BenchResult parse_fixture(const std::string& name) {
  const Result<BenchResult> result = parse_nccl_tests_log(read_file(fixture("nccl-tests/" + name)), name);
  EXPECT_TRUE(result.ok()) << result.error();
  return result.ok() ? result.value() : BenchResult{};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// The table of an nccl-tests log: from the "out-of-place" line to "# Avg bus bandwidth".
std::vector<std::string> table_lines(const std::string& text) {
  std::vector<std::string> table;
  bool inside = false;
  for (const std::string& line : lines_of(text)) {
    if (line.find("out-of-place") != std::string::npos) inside = true;
    if (inside) table.push_back(line);
    if (line.starts_with("# Avg bus bandwidth")) break;
  }
  return table;
}

}  // namespace

TEST(BenchTable, HeaderMatchesNcclTests) {
  const std::vector<std::string> header = lines_of(bench_table_header());
  ASSERT_EQ(header.size(), 4u);
  EXPECT_EQ(header[0], "#");
  EXPECT_EQ(header[1],
            "#                                                              out-of-place                     "
            "  in-place");
  EXPECT_EQ(header[2],
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
            "algbw   busbw #wrong");
  EXPECT_EQ(header[3],
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
            "(GB/s)  (GB/s)");
}

TEST(BenchTable, TimePrecisionFollowsMagnitude) {
  BenchRow row;
  row.bytes = 1024;
  row.count = 256;
  row.out_of_place = Measurement{35.594, 0.0288, 0.0288, 0};
  row.in_place = Measurement{131.86, 15.904, 15.904, std::nullopt};
  EXPECT_EQ(bench_table_row(row),
            "        1024           256     float     sum      -1    35.59    0.03    0.03      0"
            "    131.9   15.90   15.90    N/A\n");
  row.out_of_place = Measurement{10094.4, 425.494, 839.163, 12};
  row.in_place.reset();
  EXPECT_EQ(bench_table_row(row),
            "        1024           256     float     sum      -1    10094  425.49  839.16     12\n");
}

// Rendering what was parsed gives back nccl-tests' own table, line for line.
TEST(BenchTable, ReproducesTheTablesOfNcclTestsLogs) {
  for (const std::string name : {"alltoall-8rank-wrong-data.txt", "all-gather-rank-list-elided.txt",
                                 "all-reduce-last-rank-line-only.txt", "all-reduce-doctored-busbw.txt"}) {
    const std::string log = read_file(fixture("nccl-tests/" + name));
    std::vector<std::string> rendered = table_lines(render_bench_table(parse_fixture(name)));
    EXPECT_EQ(rendered, table_lines(log)) << name;
  }
}

TEST(BenchTable, FooterCountsWrongDataAndSaysHowTimesWereCombined) {
  BenchResult result = parse_fixture("alltoall-8rank-wrong-data.txt");
  result.time_rule = "max";
  const std::vector<std::string> footer = lines_of(bench_table_footer(result));
  ASSERT_EQ(footer.size(), 4u);
  EXPECT_EQ(footer[0], "# Out of bounds values : 1 FAILED");
  EXPECT_EQ(footer[1], "# Avg bus bandwidth    : 92.1675");
  EXPECT_EQ(footer[2], "# Time per op          : max over ranks (the slowest rank)");
  EXPECT_EQ(footer[3], "#");

  result.avg_busbw.reset();  // then the mean of the rows
  EXPECT_EQ(lines_of(bench_table_footer(result))[1], "# Avg bus bandwidth    : 92.17");
}

TEST(BenchTable, GoldenNewestLogWithChecksOff) {
  expect_golden("bench_table_check_off.txt",
                render_bench_table(parse_fixture("all-reduce-2.19-check-off.txt")));
}

TEST(BenchTable, GoldenOldLogWithErrorColumn) {
  expect_golden("bench_table_error_column.txt",
                render_bench_table(parse_fixture("all-reduce-2021-error-column.txt")));
}

TEST(BenchTable, GoldenAlltoallWithWrongData) {
  BenchResult result = parse_fixture("alltoall-8rank-wrong-data.txt");
  result.time_rule = "max";
  expect_golden("bench_table_alltoall.txt", render_bench_table(result));
}
