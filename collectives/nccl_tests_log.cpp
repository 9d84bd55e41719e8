// The nccl-tests log as a whole (nccl_tests_log.h): its lines scanned, then what they mean: the
// collective, the rank count, the time rule and the notes; and what the console and -J outputs say alike.
#include "collectives/nccl_tests_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "base/text_words.h"
#include "base/utf8.h"
#include "collectives/bus_bandwidth.h"
#include "collectives/library_versions.h"
#include "collectives/nccl_tests_log_lines.h"

namespace nccltune::nccl_tests_detail {
namespace {

// ---- words and numbers ------------------------------------------------------------------------

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// A table row's first word: digits, or a sign and digits (a negative size, dropped with a note).
bool starts_like_number(std::string_view word) {
  if (!word.empty() && (word[0] == '-' || word[0] == '+')) word.remove_prefix(1);
  return !word.empty() && std::isdigit(static_cast<unsigned char>(word[0]));
}

int bytes_per_element(std::string_view type) {
  if (type == "int8" || type == "uint8" || type == "char" || type == "f8e4m3" || type == "f8e5m2" ||
      type == "fp8_e4m3" || type == "fp8_e5m2")
    return 1;
  if (type == "half" || type == "bfloat16" || type == "float16") return 2;
  if (type == "int32" || type == "uint32" || type == "int" || type == "float" || type == "float32") return 4;
  if (type == "int64" || type == "uint64" || type == "double" || type == "float64") return 8;
  return 0;
}

bool is_reduction(std::string_view redop) {
  return redop == "sum" || redop == "prod" || redop == "max" || redop == "min" || redop == "avg" ||
         redop == "mulsum" || redop == "premulsum";
}

std::string time_rule_of_average_flag(int64_t average) {
  switch (average) {
    case 0: return "rank0";
    case 1: return "avg";
    case 2: return "min";
    case 3: return "max";
    default: return "unknown";
  }
}

// ---- the rank count ----------------------------------------------------------------------------

using RankCount = NcclTestsRankCount;

int highest_rank(const std::vector<NcclTestsRank>& ranks) {
  int highest = 0;
  for (const NcclTestsRank& rank : ranks) highest = std::max(highest, rank.rank);
  return highest;
}

RankCount count_ranks(const std::vector<NcclTestsRank>& rank_lines, const std::optional<CommandLine>& command,
                      std::optional<std::pair<int64_t, int64_t>> threads_and_gpus,
                      std::optional<std::pair<int, int>> tuner_init) {
  RankCount count = count_nccl_tests_ranks(rank_lines);
  if (count.complete) return count;
  if (!rank_lines.empty()) {
    count.notes.push_back(
        fmt::format("the rank lines list {} of at least {} ranks (highest: Rank {}): the list is incomplete",
                    rank_lines.size(), highest_rank(rank_lines) + 1, highest_rank(rank_lines)));
  }

  // NCCL's own count, through the tuner plugin it handed the communicator to.
  if (tuner_init) {
    count.nodes = tuner_init->first;
    count.ranks = tuner_init->second;
    count.notes.push_back(fmt::format("ranks {} and nodes {} from the tuner plugin's 'Initializing tuner for "
                                      "{} nodes, {} ranks' line, not from rank lines",
                                      tuner_init->second, tuner_init->first, tuner_init->first,
                                      tuner_init->second));
    return count;
  }

  // A launcher line: `mpirun -np P ... X_perf [-t T] [-g G]`, or X_perf run directly (one process).
  if (command) {
    const size_t program = command->program;
    size_t first = 0;  // skip "NCCL_DEBUG=INFO ..." assignments before the command
    while (first < program && command->words[first].find('=') != std::string::npos) ++first;
    std::optional<int64_t> processes;
    if (program == first) {
      processes = 1;
    } else {
      const std::string_view launcher = after_last_slash(command->words[first]);
      if (launcher == "mpirun" || launcher == "mpiexec" || launcher == "orterun" || launcher == "srun")
        processes = flag_value(command->words, first + 1, program, {"-np", "-n", "--np", "--n", "--ntasks"});
    }
    const size_t end = command->words.size();
    const int64_t threads =
        threads_and_gpus ? threads_and_gpus->first
                         : flag_value(command->words, program + 1, end, {"-t", "--nthreads"}).value_or(1);
    const int64_t gpus = threads_and_gpus
                             ? threads_and_gpus->second
                             : flag_value(command->words, program + 1, end, {"-g", "--ngpus"}).value_or(1);
    if (processes && *processes > 0 && threads > 0 && gpus > 0) {
      count.ranks = static_cast<int>(*processes * threads * gpus);
      count.notes.push_back(fmt::format(
          "ranks {} from the command line ({} process{} x nThread {} x nGpus {}), not from rank lines",
          *count.ranks, *processes, *processes == 1 ? "" : "es", threads, gpus));
      return count;
    }
  }
  return count;
}

// all_gather, reduce_scatter and alltoall print the per-rank element count next to the total
// size, so size / (count x element size) is the rank count.
std::optional<int> ranks_from_count_column(const BenchResult& bench) {
  if (bench.op != "all_gather" && bench.op != "reduce_scatter" && bench.op != "alltoall") return std::nullopt;
  std::optional<int64_t> ranks;
  for (const BenchRow& row : bench.rows) {
    const int64_t per_rank = row.count * bytes_per_element(row.type);
    if (per_rank <= 0 || row.bytes % per_rank != 0) return std::nullopt;
    if (ranks && *ranks != row.bytes / per_rank) return std::nullopt;
    ranks = row.bytes / per_rank;
  }
  if (!ranks || *ranks < 1) return std::nullopt;
  return static_cast<int>(*ranks);
}

std::string describe_rank_range(std::string_view op, const RankRange& range) {
  if (range.fewest == 0) return fmt::format("no rank count gives that factor for {}", op);
  if (range.open_ended) return fmt::format("which {} gives for {} or more ranks", op, range.fewest);
  if (range.fewest == range.most) return fmt::format("which {} gives for {} ranks", op, range.fewest);
  return fmt::format("which {} gives for {} to {} ranks", op, range.fewest, range.most);
}

// Everything the lines of a log say, before deciding what it means.
struct ScannedLog {
  std::optional<TableLayout> layout;  // of the first table
  std::vector<BenchRow> rows;
  std::optional<double> avg_busbw;
  std::optional<int64_t> out_of_bounds;
  bool out_of_bounds_failed = false;
  int tables = 0;
  std::vector<std::string> dropped_rows;  // inside the table, starting like a row, but not one: why
  std::optional<std::string> program_from_banner;
  std::optional<std::string> program_from_footer;  // "# Collective test concluded: X"
  std::optional<int> cuda_driver;                   // NCCL's "cudaDriverVersion 12080"
  std::optional<std::pair<int, int>> tuner_init;    // {nodes, ranks}: the largest communicator's
  std::optional<std::pair<int64_t, int64_t>> threads_and_gpus;
  std::vector<NcclTestsRank> rank_lines;
  std::optional<std::string> nccl_version;
  std::map<std::string, std::string> env;
};

ScannedLog scan_lines(const std::vector<NumberedLine>& lines) {
  ScannedLog scan;
  bool table_done = false;
  for (const auto& [line, number] : lines) {
    const std::vector<std::string_view> words = comment_words(line);
    // Lines with or without the '#' (2017 builds printed none before nThread and the footer).
    const std::vector<std::string_view> plain = words.empty() ? split_words(line) : words;
    if (auto header = read_table_header(line)) {
      ++scan.tables;
      if (!scan.layout)
        scan.layout = std::move(header);
      else
        table_done = true;
      continue;
    }
    if (words.size() >= 4 && words[0] == "Collective" && words[1] == "test" && words[2] == "starting:" &&
        !scan.program_from_banner) {
      scan.program_from_banner = collective_of_program(words[3]);
      continue;
    }
    if (words.size() >= 4 && words[0] == "Collective" && words[1] == "test" && words[2] == "concluded:" &&
        !scan.program_from_footer) {
      scan.program_from_footer = collective_of_program(words[3]);
      continue;
    }
    if (plain.size() >= 4 && plain[0] == "nThread" && plain[2] == "nGpus") {
      const auto threads = to_int(plain[1]);
      const auto gpus = to_int(plain[3]);
      if (threads && gpus && !scan.threads_and_gpus) scan.threads_and_gpus = std::pair{*threads, *gpus};
      continue;
    }
    if (auto rank_line = read_rank_line(line)) {
      if (!scan.layout) scan.rank_lines.push_back(std::move(*rank_line));
      continue;
    }
    if (plain.size() >= 6 && plain[0] == "Out" && plain[1] == "of" && plain[2] == "bounds") {
      if (!table_done) {
        scan.out_of_bounds = to_int(plain[5]);
        scan.out_of_bounds_failed = plain.size() > 6 && plain[6] == "FAILED";
      }
      continue;
    }
    if (plain.size() >= 5 && plain[0] == "Avg" && plain[1] == "bus" && plain[2] == "bandwidth") {
      if (scan.layout && !table_done) scan.avg_busbw = to_double(plain[4]);
      table_done = true;
      continue;
    }
    if (!scan.nccl_version) {
      if (auto version = read_nccl_version(line)) {
        scan.nccl_version = std::move(version);
        continue;
      }
    }
    if (auto env = read_nccl_env_line(line)) {
      scan.env.insert(std::move(*env));
      continue;
    }
    if (const auto driver = read_cuda_driver_line(line)) {
      if (!scan.cuda_driver) scan.cuda_driver = driver;
      continue;
    }
    if (const auto init = read_tuner_init_line(line)) {
      if (!scan.tuner_init || init->second > scan.tuner_init->second) scan.tuner_init = init;
      continue;
    }
    if (scan.layout && !table_done && !is_comment(line)) {
      const std::vector<std::string_view> row_words = split_words(line);
      if (row_words.empty() || !starts_like_number(row_words[0])) continue;
      if (Result<BenchRow> row = read_table_row(line, *scan.layout))
        scan.rows.push_back(std::move(*row));
      else
        scan.dropped_rows.push_back(fmt::format("line {}: {}", number, row.error()));
    }
  }
  return scan;
}

}  // namespace
}  // namespace nccltune::nccl_tests_detail

namespace nccltune {

// ---- the parser --------------------------------------------------------------------------------

Result<NcclTestsLog> read_nccl_tests_log(std::string_view input, std::string_view origin) {
  using namespace nccl_tests_detail;  // the log's lines (nccl_tests_log_lines.h), in this function only
  // A log is ASCII when sane, and what the result keeps of it (hosts, versions, argv, env, data
  // types) is written as JSON: bytes that are not UTF-8 become '?' first, so it always can be.
  const bool valid = is_valid_utf8(input);
  const std::string repaired = valid ? std::string() : repaired_utf8(input);
  const std::string_view text = valid ? input : std::string_view(repaired);
  const std::vector<std::string_view> lines = split_lines(text);
  const UnbrokenLines unbroken = unbreak_alltoallv_rows(lines);
  ScannedLog scan = scan_lines(unbroken.lines);
  for (const std::size_t number : unbroken.cut_short)
    scan.dropped_rows.push_back(
        fmt::format("line {}: an alltoallv summary broke it and ended before its last '#   rank=' line", number));
  if (!scan.layout)
    return Error{fmt::format("{}: no nccl-tests table (no '#  size  count ...' header line)", origin)};
  if (scan.rows.empty())
    return Error{
        fmt::format("{}: the nccl-tests table has no rows{}", origin,
                    scan.dropped_rows.empty() ? "" : " (dropped the row on " + scan.dropped_rows[0] + ")")};
  const TableLayout& layout = *scan.layout;

  NcclTestsLog log;
  BenchResult& bench = log.bench;
  bench.rows = std::move(scan.rows);
  bench.avg_busbw = scan.avg_busbw;
  bench.context.nccl_version = std::move(scan.nccl_version);
  bench.context.env = std::move(scan.env);
  if (scan.cuda_driver) bench.context.cuda_driver = cuda_driver_version_string(*scan.cuda_driver);
  // The command line: argv, NCCL_* variables set on it, the -a flag.
  std::optional<CommandLine> command;
  for (const std::string& line : join_continued_lines(lines)) {
    if ((command = read_command_line(line))) break;
  }
  if (command) {
    bench.context.argv = command->words;
    for (const std::string& word : command->words) {
      const size_t equals = word.find('=');
      if (word.starts_with("NCCL_") && equals != std::string::npos)
        bench.context.env.emplace(word.substr(0, equals), word.substr(equals + 1));
    }
  }

  // What ran.
  const BenchRow& first = bench.rows.front();
  bench.dtype = first.type;
  if (scan.program_from_banner && !scan.program_from_banner->empty()) {
    bench.op = *scan.program_from_banner;
  } else if (scan.program_from_footer && !scan.program_from_footer->empty()) {
    bench.op = *scan.program_from_footer;  // the head of the output was cut off
  } else if (command) {
    bench.op = command->collective;
  } else if (is_reduction(first.redop)) {
    bench.op = "all_reduce";
    log.op_assumed = true;
    log.notes.push_back(
        fmt::format("no program name in the file (no '# Collective test starting' or 'concluded' line, no command line "
                    "running *_perf): op all_reduce assumed from redop '{}' (reduce_scatter and reduce print "
                    "the same columns)",
                    first.redop));
  } else {
    bench.op = "unknown";
    log.op_assumed = true;
    log.notes.push_back(fmt::format(
        "no program name in the file and redop '{}' is not a reduction: op unknown", first.redop));
  }

  // How many ranks.
  RankCount rank_count = count_ranks(scan.rank_lines, command, scan.threads_and_gpus, scan.tuner_init);
  bench.ranks = rank_count.ranks;
  bench.nodes = rank_count.nodes;
  bench.context.hosts = std::move(rank_count.hosts);
  for (std::string& note : rank_count.notes) log.notes.push_back(std::move(note));
  if (!bench.ranks && !log.op_assumed) {
    if (const auto ranks = ranks_from_count_column(bench)) {
      bench.ranks = ranks;
      log.notes.push_back(fmt::format("ranks {} from the table: {} prints bytes = count x {} bytes x ranks",
                                      *ranks, bench.op, bytes_per_element(first.type)));
    }
  }
  if (!bench.ranks) {
    log.notes.push_back(
        "rank count unknown: no complete list of '#  Rank' lines and no launcher "
        "line with -np; ranks left null");
    if (const auto factor = implied_bus_factor(bench)) {
      const auto range = ranks_with_bus_factor(bench.op, *factor);
      log.notes.push_back(fmt::format("inferred, not stated in the log: busbw/algbw = {:.5f}..{:.5f}{}",
                                      factor->low, factor->high,
                                      range ? ", " + describe_rank_range(bench.op, *range) : std::string()));
    }
  }

  // How times were combined across ranks.
  bench.time_rule = command ? nccl_tests_time_rule(command->words, command->program + 1, log.notes)
                            : nccl_tests_time_rule({}, 0, log.notes);

  // Anything else the reader should know.
  if (layout.cpu_time) log.notes.push_back("times are CPU times (nccl-tests -C 1), not GPU times");
  if (layout.times_in_ms) {
    log.time_step_us = 1;
    log.notes.push_back("2017-era table: times were printed in ms, converted to us");
  }
  if (unbroken.summaries > 0)
    log.notes.push_back(fmt::format(
        "skipped {} alltoallv per-rank summaries (NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1) printed inside the rows",
        unbroken.summaries));
  if (layout.per_iteration)
    log.notes.push_back(
        "per-iteration columns (-I 1: i_min i_max i_p99 i_cv%) not imported: nccltune/bench/v1 has no field "
        "for them");
  if (layout.error_column)
    log.notes.push_back(
        "old 'error' column (largest deviation, not a count of wrong elements): wrong left null");
  if (scan.out_of_bounds && *scan.out_of_bounds > 0)
    log.notes.push_back(fmt::format("nccl-tests reported {} out-of-bounds values{}", *scan.out_of_bounds,
                                    scan.out_of_bounds_failed ? " (FAILED)" : ""));
  constexpr std::size_t kDroppedRowsNamed = 20;  // a damaged file may have thousands
  for (std::size_t i = 0; i < scan.dropped_rows.size() && i < kDroppedRowsNamed; ++i)
    log.notes.push_back("dropped the row on " + scan.dropped_rows[i]);
  if (scan.dropped_rows.size() > kDroppedRowsNamed)
    log.notes.push_back(fmt::format("dropped {} more rows", scan.dropped_rows.size() - kDroppedRowsNamed));
  if (scan.tables > 1)
    log.notes.push_back(fmt::format("the file holds {} tables; only the first was imported", scan.tables));
  if (std::any_of(bench.rows.begin(), bench.rows.end(),
                  [&](const BenchRow& row) { return row.type != first.type; }))
    log.notes.push_back("rows use more than one data type; dtype is the first row's");
  if (!bench.avg_busbw) log.notes.push_back("no '# Avg bus bandwidth' line: avg_busbw left null");
  return log;
}

Result<BenchResult> parse_nccl_tests_log(std::string_view text, std::string_view origin) {
  Result<NcclTestsLog> log = read_nccl_tests_log(text, origin);
  if (!log) return Error{log.error()};
  return std::move(log.value().bench);
}

// ---- what both outputs say alike ---------------------------------------------------------------

std::string nccl_tests_collective(std::string_view program) {
  return nccl_tests_detail::collective_of_program(program);
}

double nccl_tests_bus_factor(std::string_view op, int ranks) {
  if (op == "alltoallv") return bus_bandwidth_factor("alltoall", ranks);  // (n-1)/n, src/alltoallv.cu
  return bus_bandwidth_factor(op, ranks);
}

std::string nccl_tests_time_rule(const std::vector<std::string>& words, std::size_t from,
                                 std::vector<std::string>& notes) {
  if (const auto average = nccl_tests_detail::flag_value(words, from, words.size(), {"-a", "--average"}))
    return nccl_tests_detail::time_rule_of_average_flag(*average);
  notes.push_back(
      "time_rule avg assumed: nccl-tests' default (-a 1, mean over ranks); "
      "builds before mid-2021 printed rank 0's time");
  return "avg";
}

NcclTestsRankCount count_nccl_tests_ranks(const std::vector<NcclTestsRank>& ranks) {
  NcclTestsRankCount count;
  std::map<int, std::set<int>> ranks_by_group;
  for (const NcclTestsRank& rank : ranks) {
    if (std::find(count.hosts.begin(), count.hosts.end(), rank.host) == count.hosts.end())
      count.hosts.push_back(rank.host);
    ranks_by_group[rank.group].insert(rank.rank);
  }
  std::set<int> all_ranks;
  for (const auto& [group, members] : ranks_by_group) all_ranks.insert(members.begin(), members.end());
  count.complete = !ranks.empty() && all_ranks.size() == ranks.size() && *all_ranks.begin() == 0 &&
                   *all_ranks.rbegin() == static_cast<int>(ranks.size()) - 1;
  if (!count.complete) return count;
  count.nodes = static_cast<int>(count.hosts.size());
  const size_t per_group = ranks_by_group.begin()->second.size();
  const bool equal_groups = std::all_of(ranks_by_group.begin(), ranks_by_group.end(),
                                        [&](const auto& g) { return g.second.size() == per_group; });
  if (ranks_by_group.size() == 1) {
    count.ranks = static_cast<int>(ranks.size());
  } else if (equal_groups) {
    count.ranks = static_cast<int>(per_group);
    count.notes.push_back(
        fmt::format("the {} ranks form {} groups (NCCL_TESTS_SPLIT_MASK) of {}: ranks = {} per communicator",
                    ranks.size(), ranks_by_group.size(), per_group, per_group));
  } else {
    count.notes.push_back(
        fmt::format("the {} ranks form {} groups of different sizes: rank count per communicator unknown",
                    ranks.size(), ranks_by_group.size()));
  }
  return count;
}

}  // namespace nccltune
