#include "collectives/nccl_tests_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "base/printable_text.h"
#include "base/text_words.h"
#include "base/utf8.h"
#include "collectives/bus_bandwidth.h"

namespace nccltune {
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

// The words of a comment line without its leading '#' ("#  Rank 0 ..." -> "Rank", "0", ...).
std::vector<std::string_view> comment_words(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos || line[first] != '#') return {};
  return split_words(line.substr(first + 1));
}

bool is_comment(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '#';
}

std::optional<double> to_double(std::string_view word) {
  double value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A table row's first word: digits, or a sign and digits (a negative size, dropped with a note).
bool starts_like_number(std::string_view word) {
  if (!word.empty() && (word[0] == '-' || word[0] == '+')) word.remove_prefix(1);
  return !word.empty() && std::isdigit(static_cast<unsigned char>(word[0]));
}

std::string_view after_last_slash(std::string_view word) {
  const size_t slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

// "all_reduce_perf", "/opt/nccl-tests/build/all_gather_perf", "alltoall_perf_mpi" -> the
// collective's name; empty for anything else.
std::string collective_of_program(std::string_view word) {
  const bool path = std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
  });
  if (!path) return {};  // "CMD=./all_reduce_perf", quoted words: not a program being run
  std::string_view name = after_last_slash(word);
  if (name.ends_with("_mpi")) name.remove_suffix(4);
  if (!name.ends_with("_perf") || name.size() <= 5) return {};
  name.remove_suffix(5);
  const bool plain =
      std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
  return plain ? std::string(name) : std::string();
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

// Half a unit of the last digit nccl-tests prints: bandwidths with 2 decimals (1 from 1000 GB/s
// on in newer builds), times with 2, 1 or 0 decimals by magnitude (the coarser of the old and new
// rules).
double bandwidth_rounding(double gbps) {
  return gbps >= 999.995 ? 0.05 : 0.005;
}
double time_rounding(double time_us) {
  return time_us >= 10000 ? 0.5 : (time_us >= 100 ? 0.05 : 0.005);
}

// ---- the table header -------------------------------------------------------------------------

struct MeasurementColumns {
  size_t time = 0;
  size_t algbw = 0;
  size_t busbw = 0;
  std::optional<size_t> wrong;  // "#wrong"; nullopt for the old "error"/"res" column
};

struct TableLayout {
  size_t bytes = 0;
  size_t count = 0;
  std::optional<size_t> type;
  std::optional<size_t> redop;
  std::optional<size_t> root;
  std::vector<MeasurementColumns> measurements;  // out-of-place, then in-place
  size_t columns = 0;                            // words a row must have at least
  bool cpu_time = false;
  bool error_column = false;  // old builds: largest deviation instead of a wrong count
  bool times_in_ms = false;   // 2017 builds: "bytes N type op time ..." in milliseconds
  bool per_iteration = false;  // -I 1: i_min i_max i_p99 i_cv% after each measurement, read past
};

// "#       size         count      type   redop    root     time   algbw   busbw #wrong ..."
std::optional<TableLayout> read_table_header(std::string_view line) {
  const std::vector<std::string_view> names = comment_words(line);
  if (names.size() < 5 || (names[0] != "size" && names[0] != "bytes")) return std::nullopt;
  TableLayout layout;
  layout.times_in_ms = names[0] == "bytes";
  std::optional<size_t> count;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    if (name == "count" || name == "N") {
      count = i;
    } else if (name == "type") {
      layout.type = i;
    } else if (name == "redop" || name == "op") {
      layout.redop = i;
    } else if (name == "root") {
      layout.root = i;
    } else if (name == "time" || name == "cputime") {
      layout.cpu_time = name == "cputime";
      layout.measurements.push_back(MeasurementColumns{i, 0, 0, std::nullopt});
    } else if (!layout.measurements.empty()) {
      MeasurementColumns& columns = layout.measurements.back();
      if (name == "algbw" && columns.algbw == 0) columns.algbw = i;
      if (name == "busbw" && columns.busbw == 0) columns.busbw = i;
      if (name == "#wrong") columns.wrong = i;
      if (name == "error" || name == "res") layout.error_column = true;
      if (name == "i_min") layout.per_iteration = true;
    }
    if (name != "timestamp") layout.columns = i + 1;
  }
  if (!count || layout.measurements.empty()) return std::nullopt;
  for (const MeasurementColumns& columns : layout.measurements)
    if (columns.algbw == 0 || columns.busbw == 0) return std::nullopt;
  if (layout.measurements.size() > 2) layout.measurements.resize(2);
  layout.count = *count;
  return layout;
}

std::optional<Measurement> read_measurement(const std::vector<std::string_view>& words,
                                            const MeasurementColumns& columns, const TableLayout& layout) {
  const auto time = to_double(words[columns.time]);
  const auto algbw = to_double(words[columns.algbw]);
  const auto busbw = to_double(words[columns.busbw]);
  if (!time || !algbw || !busbw) return std::nullopt;
  Measurement measurement;
  // 2017 tables print ms with 3 decimals: whole microseconds, kept free of binary noise.
  measurement.time_us = layout.times_in_ms ? std::round(*time * 1000) : *time;
  measurement.algbw = *algbw;
  measurement.busbw = *busbw;
  if (columns.wrong && words[*columns.wrong] != "N/A") {
    const auto wrong = to_double(words[*columns.wrong]);  // "%5g": may read "1e+06"
    if (!wrong) return std::nullopt;
    measurement.wrong = static_cast<int64_t>(std::llround(*wrong));
  }
  return measurement;
}

// A row of the table, or why the line is not one.
Result<BenchRow> read_table_row(std::string_view line, const TableLayout& layout) {
  const std::vector<std::string_view> words = split_words(line);
  if (words.size() < layout.columns)
    return Error{fmt::format("{} columns, the header has {}", words.size(), layout.columns)};
  const auto bytes = to_int(words[layout.bytes]);
  const auto count = to_int(words[layout.count]);
  if (!bytes || *bytes < 0 || *bytes > kNcclTestsMaxRowBytes)
    return Error{fmt::format("size '{}' is not a whole number of bytes from 0 to 1 PiB",
                             printable_excerpt(words[layout.bytes], 40))};
  if (!count || *count < 0 || *count > *bytes)
    return Error{fmt::format("count '{}' is not a whole number from 0 to the size",
                             printable_excerpt(words[layout.count], 40))};
  BenchRow row;
  row.bytes = *bytes;
  row.count = *count;
  if (layout.type) row.type = std::string(words[*layout.type]);
  row.redop = layout.redop ? std::string(words[*layout.redop]) : "none";
  if (layout.root) {
    const auto root = to_int(words[*layout.root]);
    if (!root || *root < -1 || *root > INT32_MAX) return Error{"the root is not a rank"};
    row.root = static_cast<int>(*root);
  }
  const auto out_of_place = read_measurement(words, layout.measurements[0], layout);
  if (!out_of_place) return Error{"the out-of-place time, algbw or busbw is not a number"};
  row.out_of_place = *out_of_place;
  if (layout.measurements.size() > 1) {
    row.in_place = read_measurement(words, layout.measurements[1], layout);
    if (!row.in_place) return Error{"the in-place time, algbw or busbw is not a number"};
  }
  return row;
}

// ---- what the lines around the table say -----------------------------------------------------

// "#  Rank  0 Group  0 Pid     23 on host-0 device  0 [0000:cc:00] NVIDIA H200", or older forms
// without Group and Pid.
std::optional<NcclTestsRank> read_rank_line(std::string_view line) {
  const std::vector<std::string_view> words = comment_words(line);
  if (words.size() < 4 || words[0] != "Rank") return std::nullopt;
  const auto rank = to_int(words[1]);
  if (!rank) return std::nullopt;
  NcclTestsRank rank_line;
  rank_line.rank = static_cast<int>(*rank);
  for (size_t i = 2; i + 1 < words.size(); ++i) {
    if (words[i] == "Group") {
      const auto group = to_int(words[i + 1]);
      if (group) rank_line.group = static_cast<int>(*group);
    } else if (words[i] == "on") {
      rank_line.host = std::string(words[i + 1]);
      return rank_line;
    }
  }
  return std::nullopt;
}

// A command line that runs an nccl-tests program (continuation lines already joined).
struct CommandLine {
  std::vector<std::string> words;  // from the launcher or program on
  size_t program = 0;              // index of the X_perf word
  std::string collective;
};

std::optional<CommandLine> read_command_line(std::string_view line) {
  if (is_comment(line)) return std::nullopt;
  const std::vector<std::string_view> words = split_words(line);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string collective = collective_of_program(words[i]);
    if (collective.empty()) continue;
    size_t first = 0;  // drop shell prompts and quote marks ("$ ", "+ ", "> ")
    while (first < i && (words[first] == "$" || words[first] == "+" || words[first] == ">")) ++first;
    CommandLine command;
    for (size_t j = first; j < words.size(); ++j) {
      const std::string_view word = words[j];
      if (j > i && (word == ">" || word == ">>" || word == "|" || word == "|&" || word == "&&" ||
                    word == ";" || word == "2>&1" || word == "2>" || word == "&>"))
        break;  // shell redirection or the next command
      command.words.emplace_back(word);
    }
    command.program = i - first;
    command.collective = std::move(collective);
    return command;
  }
  return std::nullopt;
}

// The value of a flag in words[from, to): "-np 16", "--ntasks=16", "-g8".
std::optional<int64_t> flag_value(const std::vector<std::string>& words, size_t from, size_t to,
                                  std::initializer_list<std::string_view> flags) {
  for (size_t i = from; i < to; ++i) {
    const std::string_view word = words[i];
    for (const std::string_view flag : flags) {
      std::optional<int64_t> value;
      if (word == flag && i + 1 < to)
        value = to_int(words[i + 1]);
      else if (word.size() > flag.size() + 1 && word.starts_with(flag) && word[flag.size()] == '=')
        value = to_int(word.substr(flag.size() + 1));
      else if (flag.size() == 2 && word.size() > 2 && word.starts_with(flag))  // getopt's "-g8"
        value = to_int(word.substr(2));
      if (value) return value;
    }
  }
  return std::nullopt;
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

// "NCCL version 2.23.4+cuda12.6" (also inside "host:1:2 [0] NCCL INFO NCCL version ..."), or the
// newest nccl-tests' "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803".
std::optional<std::string> read_nccl_version(std::string_view line) {
  constexpr std::string_view marker = "NCCL version ";
  if (const size_t at = line.find(marker); at != std::string_view::npos) {
    const std::vector<std::string_view> words = split_words(line.substr(at + marker.size()));
    if (!words.empty() && !words[0].empty() && words[0][0] >= '0' && words[0][0] <= '9')
      return std::string(words[0].substr(0, words[0].find('+')));
  }
  constexpr std::string_view library = "nccl-library=";
  if (const size_t at = line.find(library); at != std::string_view::npos) {
    const std::vector<std::string_view> words = split_words(line.substr(at + library.size()));
    const auto code = words.empty() ? std::nullopt : to_int(words[0]);
    if (code && *code >= 20900)
      return fmt::format("{}.{}.{}", *code / 10000, *code % 10000 / 100, *code % 100);
  }
  return std::nullopt;
}

// "... NCCL INFO NCCL_IB_HCA set by environment to mlx5_0" -> {NCCL_IB_HCA, mlx5_0}.
std::optional<std::pair<std::string, std::string>> read_nccl_env_line(std::string_view line) {
  const std::vector<std::string_view> words = split_words(line);
  for (size_t i = 0; i + 5 < words.size(); ++i) {
    if (words[i].starts_with("NCCL_") && words[i + 1] == "set" && words[i + 2] == "by" &&
        words[i + 3] == "environment" && words[i + 4] == "to") {
      std::string_view value = words[i + 5];
      if (value.ends_with('.')) value.remove_suffix(1);
      return std::pair{std::string(words[i]), std::string(value)};
    }
  }
  return std::nullopt;
}

// Joins shell continuation lines ("... \" + next line), so a command line is one line.
std::vector<std::string> join_continued_lines(const std::vector<std::string_view>& lines) {
  std::vector<std::string> joined;
  bool continues = false;
  for (std::string_view line : lines) {
    std::string_view trimmed = line;
    while (!trimmed.empty() && is_blank(trimmed.back())) trimmed.remove_suffix(1);
    const bool next_continues = trimmed.ends_with('\\') && !is_comment(line);
    if (next_continues) trimmed.remove_suffix(1);
    if (continues) {
      const std::vector<std::string_view> words = split_words(trimmed);
      joined.back() += ' ';
      joined.back() += join_words(words, !words.empty() && words[0] == ">" ? 1 : 0);
    } else {
      joined.emplace_back(trimmed);
    }
    continues = next_continues;
  }
  return joined;
}

// ---- rows broken by alltoallv's per-rank summary ----------------------------------------------
//
// alltoallv_perf with NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1 prints, from its busbw computation, a
// "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: ... nranks=N ..." line and N "#   rank=R send_bytes=S
// recv_bytes=V alg_bw=A bus_bw=B" lines in the middle of a row (src/alltoallv.cu): after the row's
// first columns and again after its out-of-place measurement, so the row goes on after the last
// rank line's bus_bw word. The row is put back together and the summary skipped.

constexpr std::string_view kAlltoallvSummary = "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY:";

struct NumberedLine {
  std::string_view text;
  std::size_t number = 0;  // in the file, from 1; a joined row has its first line's
};

struct UnbrokenLines {
  std::deque<std::string> joined;  // the rows put back together (stable storage for `lines`)
  std::vector<NumberedLine> lines;
  int summaries = 0;
  std::vector<std::size_t> cut_short;  // first lines of broken rows whose summary ended early
};

// nranks=N of a summary line; 0 when it does not say.
int64_t summary_rank_count(std::string_view summary) {
  for (const std::string_view word : split_words(summary))
    if (word.starts_with("nranks=")) return std::max<int64_t>(0, to_int(word.substr(7)).value_or(0));
  return 0;
}

// What follows the bus_bw word of a "#   rank=R ... bus_bw=B" line for rank R; nullopt for any
// other line.
std::optional<std::string_view> after_summary_rank_line(std::string_view line, int64_t rank) {
  const std::vector<std::string_view> words = comment_words(line);
  if (words.size() < 5 || words[0] != fmt::format("rank={}", rank) || !words[4].starts_with("bus_bw="))
    return std::nullopt;
  return line.substr(static_cast<std::size_t>(words[4].data() - line.data()) + words[4].size());
}

UnbrokenLines unbreak_alltoallv_rows(const std::vector<std::string_view>& lines) {
  UnbrokenLines out;
  std::optional<std::string> row;  // a row the summary broke, so far
  std::size_t row_start = 0;
  int64_t rank_lines_left = 0;
  int64_t next_rank = 0;  // the summary lists ranks 0..N-1 in order
  auto drop_row = [&] {
    if (row) out.cut_short.push_back(row_start);
    row.reset();
    rank_lines_left = 0;
  };
  // A summary begins at `marker` of `text`: its rank lines follow.
  auto begin_summary = [&](std::string_view text) {
    ++out.summaries;
    rank_lines_left = summary_rank_count(text);
    next_rank = 0;
    if (rank_lines_left == 0) drop_row();
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (rank_lines_left > 0) {
      if (const auto rest = after_summary_rank_line(line, next_rank)) {
        ++next_rank;
        if (--rank_lines_left > 0 || !row) continue;
        const std::size_t marker = rest->find(kAlltoallvSummary);  // the in-place half's summary
        *row += rest->substr(0, marker);
        if (marker != std::string_view::npos) {
          begin_summary(rest->substr(marker));
          continue;
        }
        out.joined.push_back(std::move(*row));
        row.reset();
        out.lines.push_back(NumberedLine{out.joined.back(), row_start});
        continue;
      }
      drop_row();  // the summary ended early: read this line as any other
    }
    const std::size_t marker = line.find(kAlltoallvSummary);
    if (marker == std::string_view::npos) {
      out.lines.push_back(NumberedLine{line, i + 1});
      continue;
    }
    const std::string_view before = line.substr(0, marker);
    if (!is_comment(before) && before.find_first_not_of(" \t") != std::string_view::npos) {
      drop_row();
      row = std::string(before);
      row_start = i + 1;
    }
    begin_summary(line.substr(marker));
  }
  drop_row();
  return out;
}

// ---- the rank count ----------------------------------------------------------------------------

using RankCount = NcclTestsRankCount;

int highest_rank(const std::vector<NcclTestsRank>& ranks) {
  int highest = 0;
  for (const NcclTestsRank& rank : ranks) highest = std::max(highest, rank.rank);
  return highest;
}

RankCount count_ranks(const std::vector<NcclTestsRank>& rank_lines, const std::optional<CommandLine>& command,
                      std::optional<std::pair<int64_t, int64_t>> threads_and_gpus) {
  RankCount count = count_nccl_tests_ranks(rank_lines);
  if (count.complete) return count;
  if (!rank_lines.empty()) {
    count.notes.push_back(
        fmt::format("the rank lines list {} of at least {} ranks (highest: Rank {}): the list is incomplete",
                    rank_lines.size(), highest_rank(rank_lines) + 1, highest_rank(rank_lines)));
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

// ---- the parser --------------------------------------------------------------------------------

Result<NcclTestsLog> read_nccl_tests_log(std::string_view input, std::string_view origin) {
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
  } else if (command) {
    bench.op = command->collective;
  } else if (is_reduction(first.redop)) {
    bench.op = "all_reduce";
    log.op_assumed = true;
    log.notes.push_back(
        fmt::format("no program name in the file (no '# Collective test starting' line, no command line "
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
  RankCount rank_count = count_ranks(scan.rank_lines, command, scan.threads_and_gpus);
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
  return collective_of_program(program);
}

double nccl_tests_bus_factor(std::string_view op, int ranks) {
  if (op == "alltoallv") return bus_bandwidth_factor("alltoall", ranks);  // (n-1)/n, src/alltoallv.cu
  return bus_bandwidth_factor(op, ranks);
}

std::string nccl_tests_time_rule(const std::vector<std::string>& words, std::size_t from,
                                 std::vector<std::string>& notes) {
  if (const auto average = flag_value(words, from, words.size(), {"-a", "--average"}))
    return time_rule_of_average_flag(*average);
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

// ---- checks ------------------------------------------------------------------------------------

std::vector<BusBandwidthDisagreement> check_bus_bandwidth(const BenchResult& result, double time_step_us) {
  std::vector<BusBandwidthDisagreement> disagreements;
  if (!result.ranks) return disagreements;
  const double factor = nccl_tests_bus_factor(result.op, *result.ranks);
  if (factor <= 0) return disagreements;
  auto check = [&](const BenchRow& row, const Measurement& m, bool in_place) {
    if (m.time_us <= 0) return;
    const double recomputed = algorithm_bandwidth_gbps(static_cast<double>(row.bytes), m.time_us) * factor;
    const double time_error = std::max(time_rounding(m.time_us), time_step_us / 2);
    const double tolerance = bandwidth_rounding(m.busbw) + recomputed * time_error / m.time_us + 1e-9;
    if (std::abs(recomputed - m.busbw) > tolerance)
      disagreements.push_back(BusBandwidthDisagreement{row.bytes, in_place, m.busbw, recomputed});
  };
  for (const BenchRow& row : result.rows) {
    check(row, row.out_of_place, false);
    if (row.in_place) check(row, *row.in_place, true);
  }
  return disagreements;
}

std::optional<double> average_bus_bandwidth(const BenchResult& result) {
  double sum = 0;
  int count = 0;
  for (const BenchRow& row : result.rows) {
    sum += row.out_of_place.busbw;
    ++count;
    if (row.in_place) {
      sum += row.in_place->busbw;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

std::optional<AverageBusBandwidthCheck> check_average_bus_bandwidth(const BenchResult& result) {
  const std::optional<double> recomputed = average_bus_bandwidth(result);
  if (!recomputed || !result.avg_busbw) return std::nullopt;
  double rounding = 0;  // mean rounding of the printed busbw values
  int count = 0;
  for (const BenchRow& row : result.rows) {
    rounding += bandwidth_rounding(row.out_of_place.busbw);
    ++count;
    if (row.in_place) {
      rounding += bandwidth_rounding(row.in_place->busbw);
      ++count;
    }
  }
  AverageBusBandwidthCheck check;
  check.printed = *result.avg_busbw;
  check.recomputed = *recomputed;
  // "%g" keeps 6 significant digits.
  const double printed_digit =
      check.printed > 0 ? std::pow(10.0, std::floor(std::log10(check.printed)) - 5) : 0;
  check.tolerance = rounding / count + printed_digit / 2;
  check.agrees = std::abs(check.printed - check.recomputed) <= check.tolerance + 1e-9;
  return check;
}

std::optional<BusFactorInterval> implied_bus_factor(const BenchResult& result) {
  std::optional<BusFactorInterval> interval;
  auto narrow = [&](const Measurement& m) {
    const double algbw_low = m.algbw - bandwidth_rounding(m.algbw);
    if (algbw_low <= 0) return;
    const double low = (m.busbw - bandwidth_rounding(m.busbw)) / (m.algbw + bandwidth_rounding(m.algbw));
    const double high = (m.busbw + bandwidth_rounding(m.busbw)) / algbw_low;
    if (!interval) interval = BusFactorInterval{low, high};
    interval->low = std::max(interval->low, low);
    interval->high = std::min(interval->high, high);
  };
  for (const BenchRow& row : result.rows) {
    narrow(row.out_of_place);
    if (row.in_place) narrow(*row.in_place);
  }
  if (!interval || interval->low > interval->high) return std::nullopt;
  return interval;
}

std::optional<RankRange> ranks_with_bus_factor(std::string_view op, BusFactorInterval factor) {
  constexpr int most_ranks = 65536;
  if (nccl_tests_bus_factor(op, 2) <= 0 || nccl_tests_bus_factor(op, 2) == nccl_tests_bus_factor(op, 3))
    return std::nullopt;
  RankRange range;
  for (int ranks = 2; ranks <= most_ranks; ++ranks) {
    const double f = nccl_tests_bus_factor(op, ranks);
    if (f < factor.low) continue;
    if (f > factor.high) break;
    if (range.fewest == 0) range.fewest = ranks;
    range.most = ranks;
  }
  range.open_ended = range.most == most_ranks;
  return range;
}

}  // namespace nccltune
