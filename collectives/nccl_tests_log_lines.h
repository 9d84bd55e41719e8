// The nccl-tests log's lines, for the files that read it: what one line says (header, rows, rank,
// command and env lines: nccl_tests_log_lines.cpp) and the rows alltoallv's summary broke
// (nccl_tests_log_alltoallv.cpp). Private to collectives/; the log's API is nccl_tests_log.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "collectives/bench_result.h"
#include "collectives/nccl_tests_log.h"

namespace nccltune::nccl_tests_detail {

// ---- words and numbers (nccl_tests_log_lines.cpp) ----------------------------------------------

std::vector<std::string_view> comment_words(std::string_view line);
bool is_comment(std::string_view line);
std::optional<double> to_double(std::string_view word);
std::string_view after_last_slash(std::string_view word);
std::string collective_of_program(std::string_view word);

// ---- the table header and its rows (nccl_tests_log_lines.cpp) ----------------------------------

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

std::optional<TableLayout> read_table_header(std::string_view line);
Result<BenchRow> read_table_row(std::string_view line, const TableLayout& layout);

// ---- what the lines around the table say (nccl_tests_log_lines.cpp) ----------------------------

std::optional<NcclTestsRank> read_rank_line(std::string_view line);

// A command line that runs an nccl-tests program (continuation lines already joined).
struct CommandLine {
  std::vector<std::string> words;  // from the launcher or program on
  size_t program = 0;              // index of the X_perf word
  std::string collective;
};

std::optional<CommandLine> read_command_line(std::string_view line);
std::optional<int64_t> flag_value(const std::vector<std::string>& words, size_t from, size_t to,
                                  std::initializer_list<std::string_view> flags);
std::optional<std::string> read_nccl_version(std::string_view line);
std::optional<std::pair<std::string, std::string>> read_nccl_env_line(std::string_view line);
std::optional<int> read_cuda_driver_line(std::string_view line);
std::optional<std::pair<int, int>> read_tuner_init_line(std::string_view line);  // {nodes, ranks}
std::vector<std::string> join_continued_lines(const std::vector<std::string_view>& lines);

// ---- rows broken by alltoallv's per-rank summary (nccl_tests_log_alltoallv.cpp) ----------------

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

UnbrokenLines unbreak_alltoallv_rows(const std::vector<std::string_view>& lines);

}  // namespace nccltune::nccl_tests_detail
