#include "observe/busbw_histogram.h"

#include <cmath>

namespace nccltune {

void BusbwHistogram::add(double gbps) {
  if (std::isnan(gbps)) {
    ++nan_count_;
    return;
  }
  int bin = 0;
  if (gbps > kLowestGbps) {
    const double position = std::log10(gbps / kLowestGbps) * kBinsPerDecade;
    bin = position >= kBins ? kBins - 1 : int(position);
  }
  ++bins_[std::size_t(bin)];
  ++count_;
}

std::optional<double> BusbwHistogram::quantile(double q) const {
  if (count_ == 0) return std::nullopt;
  // The smallest value with at least q of the values at or below it (nearest rank).
  const double wanted = std::ceil(q * double(count_));
  const std::uint64_t rank = wanted < 1 ? 1 : std::uint64_t(wanted);
  std::uint64_t seen = 0;
  int bin = 0;
  for (; bin < kBins; ++bin) {
    seen += bins_[std::size_t(bin)];
    if (seen >= rank) break;
  }
  return kLowestGbps * std::pow(10.0, (bin + 0.5) / kBinsPerDecade);
}

}  // namespace nccltune
