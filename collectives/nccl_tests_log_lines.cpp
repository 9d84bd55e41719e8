// What one line of an nccl-tests log says: the table's header and rows, and the lines around the
// table (rank list, command line, NCCL version and env lines, shell continuation lines).
#include "collectives/nccl_tests_log_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "base/printable_text.h"
#include "base/text_words.h"

namespace nccltune::nccl_tests_detail {

// ---- words and numbers ------------------------------------------------------------------------

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

// ---- the table header -------------------------------------------------------------------------

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

namespace {

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

}  // namespace

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

namespace {

// A shell's prompt or trace mark before a command: "$", "#", ">", "%", "+" / "++" (set -x),
// "root@host:~#", "user@host:/dir$", "[user@host dir]$" (two words), "(venv) user@host:~$".
bool is_prompt_word(std::string_view word) {
  if (word == "$" || word == "#" || word == ">" || word == "%" ||
      std::all_of(word.begin(), word.end(), [](char c) { return c == '+'; }))
    return true;
  const char last = word.empty() ? '\0' : word.back();
  return (last == '$' || last == '#' || last == '>' || last == '%') &&
         word.find_first_of("@:]~") != std::string_view::npos;
}

// How a command's first word looks: a program name or path ("mpirun", "./build/all_reduce_perf",
// "$(which mpirun)"), or an assignment ("NCCL_DEBUG=INFO"). Words of a sentence ("Running:",
// "Starting") and quoted text are not.
bool starts_command(std::string_view word) {
  if (word.front() == '"' || word.front() == '\'') return false;
  if (word.find('=') != std::string_view::npos || word.find('/') != std::string_view::npos) return true;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
           c == '$' || c == '(' || c == ')' || c == '{' || c == '}';
  });
}

}  // namespace

std::optional<CommandLine> read_command_line(std::string_view line) {
  if (is_comment(line)) return std::nullopt;
  const std::vector<std::string_view> words = split_words(line);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string collective = collective_of_program(words[i]);
    if (collective.empty()) continue;
    // The shell's prompt and trace marks are not the command: drop them, up to the last one
    // before the program.
    size_t first = 0;
    for (size_t k = 0; k < i; ++k)
      if (is_prompt_word(words[k])) first = k + 1;
    // A script's echo of what it is about to run ("echo mpirun ...", "Running: mpirun ...") names the
    // program but is not the command that ran.
    if (words[first] == "echo" || words[first] == "printf" || !starts_command(words[first])) return std::nullopt;
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

// "... NCCL INFO cudaDriverVersion 12080" (NCCL's init, src/misc/cudawrap.cc) -> 12080.
std::optional<int> read_cuda_driver_line(std::string_view line) {
  const std::vector<std::string_view> words = split_words(line);
  for (size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == "cudaDriverVersion" && i > 0 && words[i - 1] == "INFO")
      if (const auto code = to_int(words[i + 1]); code && *code > 0 && *code < 1000000)
        return static_cast<int>(*code);
  return std::nullopt;
}

// A tuner plugin's init line, "... NCCL INFO TUNER/ExamplePlugin: Initializing tuner for 4 nodes,
// 32 ranks, 1 NVL domains" (NCCL's example tuner, plugins/tuner/example/plugin.c; before 2.28
// without the NVL domains, and plugins built on it with other tags) -> {nodes, ranks}.
std::optional<std::pair<int, int>> read_tuner_init_line(std::string_view line) {
  const std::vector<std::string_view> words = split_words(line);
  for (size_t i = 0; i + 6 < words.size(); ++i) {
    if (words[i] != "Initializing" || words[i + 1] != "tuner" || words[i + 2] != "for" ||
        !words[i + 4].starts_with("nodes") || !words[i + 6].starts_with("ranks"))
      continue;
    const auto nodes = to_int(words[i + 3]);
    const auto ranks = to_int(words[i + 5]);
    if (nodes && ranks && *nodes > 0 && *ranks >= *nodes && *ranks <= (1 << 24))
      return std::pair{static_cast<int>(*nodes), static_cast<int>(*ranks)};
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

}  // namespace nccltune::nccl_tests_detail
