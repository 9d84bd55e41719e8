// `nccltune import LOG [--json FILE] [--from SRC [--nodes N --ranks N]]`: reads an nccl-tests log (its
// console output, or the file of its -J FILE.json) and prints it as nccltune/bench/v1 JSON (or writes FILE
// atomically). What the log leaves unknown stays null; assumptions, inferences and busbw values the rows do
// not reproduce go to stderr and into the JSON's "import" object. Exit 0 on success, 2 when the log holds no
// table (or is not a text file within its cap) or FILE cannot be written, 3 on a usage error or a LOG that
// does not exist or cannot be opened.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "bench_job/bench_peak_input.h"
#include "cli/commands.h"
#include "cli/topology_input.h"
#include "collectives/bench_json.h"
#include "collectives/bench_peak.h"
#include "collectives/nccl_tests_json.h"
#include "collectives/nccl_tests_log.h"

namespace nccltune::cli {

namespace {

constexpr int kImportFailed = 2;

struct ImportOptions {
  std::string log;
  std::string json;
  std::optional<std::string> from;  // the node the log ran on, for the peak
  std::optional<int> nodes, ranks;  // what a log with an elided rank list does not say
};

// The parser's notes and the checks, for people (stderr) and machines (the "import" object).
nlohmann::ordered_json import_report(const std::string& path, const NcclTestsLog& log,
                                     const std::vector<BusBandwidthDisagreement>& disagreements,
                                     const std::optional<AverageBusBandwidthCheck>& average) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const BusBandwidthDisagreement& d : disagreements) {
    rows.push_back({{"bytes", d.bytes},
                    {"in_place", d.in_place},
                    {"printed", d.printed},
                    {"recomputed", std::round(d.recomputed * 1e4) / 1e4}});
  }
  nlohmann::ordered_json report = {{"source", path},
                                   {"format", log.format},
                                   {"op_assumed", log.op_assumed},
                                   {"notes", log.notes},
                                   {"busbw_disagreements", std::move(rows)}};
  if (average) {
    report["avg_busbw_recomputed"] = std::round(average->recomputed * 1e4) / 1e4;
    report["avg_busbw_agrees"] = average->agrees;
  }
  return report;
}

void print_findings(const std::string& path, const NcclTestsLog& log,
                    const std::vector<BusBandwidthDisagreement>& disagreements,
                    const std::optional<AverageBusBandwidthCheck>& average) {
  for (const std::string& note : log.notes) print_error_line("nccltune import", path + ": " + note);
  const BenchResult& bench = log.bench;
  for (const BusBandwidthDisagreement& d : disagreements) {
    std::fprintf(stderr, "%s",
                 fmt::format("nccltune import: {}: busbw at {} B {}: printed {:.2f}, size/time x "
                             "{} factor for {} ranks gives {:.2f}\n",
                             path, d.bytes, d.in_place ? "in-place" : "out-of-place", d.printed, bench.op,
                             bench.ranks.value_or(0), d.recomputed)
                     .c_str());
  }
  if (average && !average->agrees) {
    std::fprintf(stderr, "%s",
                 fmt::format("nccltune import: {}: printed avg busbw {:g}, mean of the rows {:.4f}\n", path,
                             average->printed, average->recomputed)
                     .c_str());
  }
}

int run_import(const ImportOptions& options) {
  if (::access(options.log.c_str(), R_OK) != 0) {
    print_error_line("nccltune import", printable_excerpt(options.log, 200) + ": " + std::strerror(errno));
    return kInputError;
  }
  if (options.from && !options.from->empty()) {  // "" is this machine
    if (const std::string problem = unreadable_source(*options.from); !problem.empty()) {
      print_error_line("nccltune import", problem);
      return kInputError;
    }
  }
  const Result<std::string> text = read_text_file(options.log, kMaxLogBytes);
  if (!text) {
    print_error_line("nccltune import", text.error());
    return kImportFailed;
  }
  const Result<NcclTestsLog> log = read_nccl_tests_output(*text, options.log);
  if (!log) {
    print_error_line("nccltune import", log.error());
    return kImportFailed;
  }
  const auto disagreements = check_bus_bandwidth(log->bench, log->time_step_us);
  const auto average = check_average_bus_bandwidth(log->bench);
  print_findings(options.log, *log, disagreements, average);

  BenchResult bench = log->bench;
  if (options.ranks) bench.ranks = options.ranks;
  if (options.nodes) bench.nodes = options.nodes;
  if (options.from) {
    bench.peak = read_bench_peak(*options.from, {}, bench.op, bench.nodes, bench.ranks);
    // The line nccltune bench prints under the table; beside the JSON, not inside stdout's.
    std::fputs(peak_footer_line(bench).c_str(), options.json.empty() ? stderr : stdout);
  }
  nlohmann::ordered_json document = bench_result_to_json(bench);
  document["import"] = import_report(options.log, *log, disagreements, average);
  const std::string json = document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (options.json.empty()) {
    std::cout << json;
    return 0;
  }
  const Status written = write_file_atomically(options.json, json);
  if (!written) {
    print_error_line("nccltune import", written.error());
    return kImportFailed;
  }
  return 0;
}

}  // namespace

void add_import_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<ImportOptions>();
  auto* sub = app.add_subcommand(
      "import",
      "Read an nccl-tests log (all_reduce_perf ... output, or its -J FILE.json) as nccltune/bench/v1 JSON");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  sub->add_option("log", options->log, "nccl-tests console output, or the JSON file of its -J")
      ->required()
      ->type_name("LOG");
  sub->add_option("--json", options->json, "Write the JSON to FILE (atomically) instead of stdout")
      ->type_name("FILE");
  sub->add_option("--from", options->from,
                  "The node the log ran on (a snapshot DIR, nvidia-smi:FILE, hwloc:FILE, or \"\" for this "
                  "machine): print the busbw at the largest size as a share of its hardware peak")
      ->type_name("SRC");
  sub->add_option("--nodes", options->nodes, "Nodes the run used, where the log does not list its ranks")
      ->check(CLI::PositiveNumber);
  sub->add_option("--ranks", options->ranks, "Ranks the run used, where the log does not list them")
      ->check(CLI::PositiveNumber);
  sub->callback([options, &command] { command.run = [options] { return run_import(*options); }; });
}

}  // namespace nccltune::cli
