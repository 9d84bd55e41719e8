#include "collectives/bench_peak.h"

#include <fmt/format.h>

#include "base/byte_size.h"

namespace nccltune {

namespace {

double percent_of_peak(double busbw, double peak) {
  return 100.0 * busbw / peak;
}

}  // namespace

std::optional<LargestSize> largest_size(const BenchResult& result) {
  std::optional<LargestSize> largest;
  for (const BenchRow& row : result.rows)
    if (!largest || row.bytes >= largest->bytes) largest = LargestSize{row.bytes, row.out_of_place.busbw};
  return largest;
}

std::string peak_summary(const BenchResult& result) {
  if (!result.peak) return "";
  const BenchPeak& peak = *result.peak;
  if (!peak.gbps) return "unknown (" + peak.what + ")";
  std::string text = fmt::format("{:g} GB/s ({})", *peak.gbps, peak.what);
  auto largest = largest_size(result);
  if (!largest || *peak.gbps <= 0) return text;
  const double percent = percent_of_peak(largest->busbw, *peak.gbps);
  text += fmt::format("; busbw at {} is {:.2f} GB/s, {:.0f}% of peak",
                      format_byte_size(static_cast<std::size_t>(largest->bytes)), largest->busbw, percent);
  if (percent > 100) text += kAbovePeakNote;
  return text;
}

std::string peak_footer_line(const BenchResult& result) {
  return fmt::format("# {:<20} : {}\n", "Peak bus bandwidth", peak_summary(result));
}

BusbwVerdict judge_busbw(const BenchResult& result, const BusbwThresholds& thresholds) {
  if (!thresholds.min_busbw_gbps && !thresholds.min_peak_percent) return {};
  auto largest = largest_size(result);
  if (!largest) return {2, "cannot judge busbw: the benchmark measured no size"};
  const std::string size = format_byte_size(static_cast<std::size_t>(largest->bytes));
  std::string met;
  if (thresholds.min_busbw_gbps) {
    if (largest->busbw < *thresholds.min_busbw_gbps)
      return {1, fmt::format("busbw {:.2f} GB/s at {} is below --min-busbw {:g} GB/s", largest->busbw, size,
                             *thresholds.min_busbw_gbps)};
    met = fmt::format("busbw {:.2f} GB/s at {} meets --min-busbw {:g} GB/s", largest->busbw, size,
                      *thresholds.min_busbw_gbps);
  }
  if (thresholds.min_peak_percent) {
    if (!result.peak || !result.peak->gbps || *result.peak->gbps <= 0)
      return {2, "cannot judge --min-peak-pct: the peak is unknown (" +
                     (result.peak ? result.peak->what : std::string("no topology was read")) +
                     "); name the node with --from SNAPSHOT"};
    const double percent = percent_of_peak(largest->busbw, *result.peak->gbps);
    if (percent < *thresholds.min_peak_percent)
      return {1,
              fmt::format(
                  "busbw {:.2f} GB/s at {} is {:.1f}% of the {:g} GB/s peak ({}), below --min-peak-pct {:g}",
                  largest->busbw, size, percent, *result.peak->gbps, result.peak->what,
                  *thresholds.min_peak_percent)};
    met +=
        fmt::format("{}busbw {:.2f} GB/s at {} is {:.1f}% of the {:g} GB/s peak, meets --min-peak-pct {:g}",
                    met.empty() ? "" : "; ", largest->busbw, size, percent, *result.peak->gbps,
                    *thresholds.min_peak_percent);
  }
  return {0, met};
}

}  // namespace nccltune
