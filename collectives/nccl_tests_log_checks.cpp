// The checks of the numbers an nccl-tests table printed: each busbw against its size and time,
// the average busbw, and the busbw/algbw ratio the table implies and the rank counts that give it.
#include "collectives/nccl_tests_log.h"

#include <algorithm>
#include <cmath>

#include "collectives/bus_bandwidth.h"

namespace nccltune {
namespace {

// Half a unit of the last digit nccl-tests prints: bandwidths with 2 decimals (1 from 1000 GB/s
// on in newer builds), times with 2, 1 or 0 decimals by magnitude (the coarser of the old and new
// rules).
double bandwidth_rounding(double gbps) {
  return gbps >= 999.995 ? 0.05 : 0.005;
}
double time_rounding(double time_us) {
  return time_us >= 10000 ? 0.5 : (time_us >= 100 ? 0.05 : 0.005);
}

}  // namespace

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
