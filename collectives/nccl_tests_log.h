// Reads the console output of NVIDIA's nccl-tests (all_reduce_perf and friends) into a
// BenchResult, old and new table layouts alike, and checks the numbers it printed.
//
// Only what the file says is kept: the collective comes from the program name in the log
// ("# Collective test starting: X_perf", "# Collective test concluded: X_perf", or a command line
// that runs X_perf: a shell's prompt or trace mark before it dropped, a script's echo of it not
// taken); the rank count from a complete list of "#  Rank N ..." lines, a tuner plugin's
// "Initializing tuner for N nodes, M ranks", a launcher line `mpirun -np N ... X_perf`, or the
// count column of all_gather, reduce_scatter and alltoall tables; otherwise it stays unknown and
// a note says so. NCCL's "cudaDriverVersion 12080" (NCCL_DEBUG=INFO) gives the driver's CUDA version. Whatever had to be assumed or was inferred is written in `notes`, one line each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "collectives/bench_result.h"

namespace nccltune {

struct NcclTestsLog {
  BenchResult bench;
  std::string format = "nccl-tests";  // the console table; "nccl-tests-json": a -J FILE.json
  bool op_assumed = false;         // no program name in the file: bench.op is a guess (see notes)
  double time_step_us = 0.01;      // finest step of the printed times (1 us: 2017 tables, in ms)
  std::vector<std::string> notes;  // what was assumed, inferred or could not be known
};

// The largest size a row may name: nccl-tests' sizes are per-rank buffers, and 1 PiB is beyond
// any GPU's memory by far. A row beyond it (or with a count above its size) is dropped.
inline constexpr int64_t kNcclTestsMaxRowBytes = int64_t{1} << 50;

// Errors (one line, naming `origin`): no nccl-tests table in the text, or a table without rows.
// Rows broken by alltoallv_perf's NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY=1 lines are joined again and
// the summary lines skipped; per-iteration columns (-I 1: i_min i_max i_p99 i_cv%) are read past.
// Bytes that are not valid UTF-8 are read as '?', so every string of the result can be JSON.
Result<NcclTestsLog> read_nccl_tests_log(std::string_view text, std::string_view origin);

// The same, without the notes.
Result<BenchResult> parse_nccl_tests_log(std::string_view text, std::string_view origin);

// ---- what both outputs of an nccl-tests run (the console's and -J's) say alike ----------------

// "all_reduce_perf", "/opt/nccl-tests/build/alltoallv_perf_mpi" -> "all_reduce", "alltoallv"; empty
// for any other word.
std::string nccl_tests_collective(std::string_view program);

// nccl-tests' busbw factor of `op` for `ranks` ranks: bus_bandwidth_factor's, and alltoallv's
// (n-1)/n (src/alltoallv.cu, of the busiest rank's bytes). 0 for an unknown op.
double nccl_tests_bus_factor(std::string_view op, int ranks);

// How times were combined across ranks, from -a/--average in words[from, end) of a command line:
// "rank0", "avg", "min", "max"; without the flag, nccl-tests' default "avg" and a note saying so.
std::string nccl_tests_time_rule(const std::vector<std::string>& words, std::size_t from,
                                 std::vector<std::string>& notes);

// One rank of the device report: a "#  Rank N Group G Pid P on HOST ..." line, or an entry of a
// -J file's config.devices.
struct NcclTestsRank {
  int rank = 0;
  int group = 0;  // NCCL_TESTS_SPLIT_MASK's communicator
  std::string host;
};

struct NcclTestsRankCount {
  std::optional<int> ranks;        // per communicator; nullopt unless the list is complete
  std::optional<int> nodes;        // distinct hosts of a complete list
  std::vector<std::string> hosts;  // in order of first appearance
  std::vector<std::string> notes;
  bool complete = false;  // ranks 0..n-1, each once
};
NcclTestsRankCount count_nccl_tests_ranks(const std::vector<NcclTestsRank>& ranks);

// A printed busbw that the row's own size and time do not reproduce.
struct BusBandwidthDisagreement {
  int64_t bytes = 0;
  bool in_place = false;
  double printed = 0;     // busbw as printed, GB/s
  double recomputed = 0;  // bytes / time x bus_bandwidth_factor(op, ranks), GB/s
};

// Recomputes every busbw from size and time with the busbw factor of `result.op` for
// `result.ranks` ranks, and lists those that differ by more than the printed rounding of
// busbw and time can explain (times printed in steps of at least `time_step_us`). Empty when
// the rank count or the op's factor is unknown.
std::vector<BusBandwidthDisagreement> check_bus_bandwidth(const BenchResult& result,
                                                          double time_step_us = 0.01);

// nccl-tests' "Avg bus bandwidth": the mean of every busbw in the table, out-of-place and
// in-place over all sizes. nullopt without rows.
std::optional<double> average_bus_bandwidth(const BenchResult& result);

struct AverageBusBandwidthCheck {
  double printed = 0;
  double recomputed = 0;
  double tolerance = 0;  // what rounding of the printed values can explain
  bool agrees = false;
};

// Compares result.avg_busbw (as printed) with average_bus_bandwidth(); nullopt when either is
// missing.
std::optional<AverageBusBandwidthCheck> check_average_bus_bandwidth(const BenchResult& result);

// The busbw/algbw ratio the table implies: the interval that the printed rounding of every row
// allows (intersected over rows). nullopt when no row has a usable algbw, or the rows disagree.
struct BusFactorInterval {
  double low = 0;
  double high = 0;
};
std::optional<BusFactorInterval> implied_bus_factor(const BenchResult& result);

// The rank counts (2..65536) for which `op`'s busbw factor lies in `factor`: a contiguous range,
// since the factor grows with the rank count. nullopt when `op` is unknown or its factor does
// not depend on the rank count (broadcast, reduce). Inferred, never stated by a log.
struct RankRange {
  int fewest = 0;  // 0: no rank count fits (the op is then likely not what was run)
  int most = 0;
  bool open_ended = false;  // the range reaches 65536: "at least `fewest`"
};
std::optional<RankRange> ranks_with_bus_factor(std::string_view op, BusFactorInterval factor);

}  // namespace nccltune
