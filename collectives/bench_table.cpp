#include "collectives/bench_table.h"

#include <fmt/format.h>

#include "collectives/bench_peak.h"
#include "collectives/nccl_tests_log.h"

namespace nccltune {
namespace {

std::string without_trailing_blanks(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + '\n';
}

// nccl-tests: 2 decimals below 100 us, 1 below 10 ms, none above.
std::string format_time(double time_us) {
  if (time_us >= 10000.0) return fmt::format("{:7.0f}", time_us);
  if (time_us >= 100.0) return fmt::format("{:7.1f}", time_us);
  return fmt::format("{:7.2f}", time_us);
}

std::string format_measurement(const Measurement& m) {
  const std::string wrong = m.wrong ? std::to_string(*m.wrong) : "N/A";
  return fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>5}", format_time(m.time_us), m.algbw, m.busbw, wrong);
}

std::string describe_time_rule(const std::string& rule) {
  if (rule == "max") return "max over ranks (the slowest rank)";
  if (rule == "avg") return "mean over ranks";
  if (rule == "min") return "min over ranks (the fastest rank)";
  if (rule == "rank0") return "rank 0's own time";
  return rule;
}

}  // namespace

std::string bench_table_header() {
  std::string header = "#\n";
  header += without_trailing_blanks(fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place", "", "",
      "", "", ""));
  header += without_trailing_blanks(fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} {:>6}", "size",
      "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
      "#wrong"));
  header += without_trailing_blanks(fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}", "(B)",
      "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""));
  return header;
}

std::string bench_table_row(const BenchRow& row) {
  std::string line =
      fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}", row.bytes, row.count, row.type, row.redop, row.root);
  line += format_measurement(row.out_of_place);
  if (row.in_place) line += format_measurement(*row.in_place);
  return without_trailing_blanks(std::move(line));
}

std::string bench_table_footer(const BenchResult& result) {
  int out_of_bounds = 0;
  for (const BenchRow& row : result.rows) {
    if (row.out_of_place.wrong.value_or(0) > 0) ++out_of_bounds;
    if (row.in_place && row.in_place->wrong.value_or(0) > 0) ++out_of_bounds;
  }
  const double average = result.avg_busbw ? *result.avg_busbw : average_bus_bandwidth(result).value_or(0);
  std::string footer = fmt::format("# {:<20} : {} {}\n", "Out of bounds values", out_of_bounds,
                                   out_of_bounds ? "FAILED" : "OK");
  footer += fmt::format("# {:<20} : {:g}\n", "Avg bus bandwidth", average);
  if (result.peak) footer += peak_footer_line(result);
  footer += fmt::format("# {:<20} : {}\n", "Time per op", describe_time_rule(result.time_rule));
  footer += "#\n";
  return footer;
}

std::string render_bench_table(const BenchResult& result) {
  std::string table = bench_table_header();
  for (const BenchRow& row : result.rows) table += bench_table_row(row);
  table += bench_table_footer(result);
  return table;
}

}  // namespace nccltune
