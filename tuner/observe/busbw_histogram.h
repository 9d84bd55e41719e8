// A bounded quantile sketch of busbw: a fixed histogram on a log scale, 64 bins per decade from
// 1e-4 to 1e4 GB/s (512 counters, 4 KiB), whatever the number of records. A quantile is the
// geometric centre of the bin that holds it, so it is within half a bin (10^(1/128), 1.8%) of the
// true value inside the range; values below 1e-4 count in the first bin, above 1e4 in the last.
// NaN (Inspector's "nan") is counted apart and in no quantile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace nccltune {

class BusbwHistogram {
 public:
  static constexpr int kBinsPerDecade = 64;
  static constexpr int kDecades = 8;
  static constexpr double kLowestGbps = 1e-4;
  static constexpr int kBins = kBinsPerDecade * kDecades;

  void add(double gbps);
  // The q-quantile (0 < q <= 1: 0.5 the median, 0.1 p10); nullopt with no value counted.
  std::optional<double> quantile(double q) const;
  std::uint64_t count() const { return count_; }
  std::uint64_t nan_count() const { return nan_count_; }

 private:
  std::array<std::uint64_t, kBins> bins_{};
  std::uint64_t count_ = 0, nan_count_ = 0;
};

}  // namespace nccltune
