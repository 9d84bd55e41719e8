// A benchmark's busbw against the hardware peak, and the health thresholds prologs and node
// health checks judge it by (in the spirit of nccl-tests' NCCL_TESTS_MIN_BW). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/bench_result.h"

namespace nccltune {

// The row with the most bytes and its out-of-place busbw: the size a threshold judges, since
// only large messages reach the line rate. nullopt for an empty table.
struct LargestSize {
  std::int64_t bytes = 0;
  double busbw = 0;
};
std::optional<LargestSize> largest_size(const BenchResult& result);

// What follows a busbw above the peak, wherever one is shown: why that happens, and that it is
// not an error.
inline constexpr std::string_view kAbovePeakNote =
    " (above the line rate: NVLS and SHARP reduce inside the switch and trees move fewer bytes than busbw "
    "counts; not an error)";

// "450 GB/s (NVLink4 x18); busbw at 1G is 382.5 GB/s, 85% of peak", with kAbovePeakNote when
// above the peak, or "unknown (why)". Empty when result.peak is absent.
std::string peak_summary(const BenchResult& result);

// "# Peak bus bandwidth   : <peak_summary>\n", the line under nccl-tests' "# Avg bus bandwidth".
std::string peak_footer_line(const BenchResult& result);

struct BusbwThresholds {
  std::optional<double> min_busbw_gbps;    // --min-busbw
  std::optional<double> min_peak_percent;  // --min-peak-pct
};

// exit_code 0: every threshold met (or none given); 1: below one, `line` names the size, the
// measured value and the threshold; 2: a threshold cannot be judged (no rows, peak unknown).
struct BusbwVerdict {
  int exit_code = 0;
  std::string line;  // empty when no threshold was given
};
BusbwVerdict judge_busbw(const BenchResult& result, const BusbwThresholds& thresholds);

}  // namespace nccltune
