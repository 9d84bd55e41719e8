#include "search/fitted_loss.h"

#include <algorithm>
#include <cmath>

#include "search/crossover.h"

namespace nccltune {

namespace {

// The times (bytes / busbw, up to the collective's busbw factor) of points first..last; nullopt
// when a busbw is not a finite number above 0.
std::optional<MeasuredTimes> times_of(const std::vector<std::uint64_t>& sizes, const std::vector<double>& busbw,
                                      std::size_t first, std::size_t last) {
  MeasuredTimes out;
  for (std::size_t i = first; i <= last; ++i) {
    if (!std::isfinite(busbw[i]) || !(busbw[i] > 0)) return std::nullopt;
    out.sizes.push_back(sizes[i]);
    out.time_us.push_back(static_cast<double>(sizes[i]) / busbw[i]);
  }
  return out;
}

std::optional<CostFit> fit_of(const std::optional<MeasuredTimes>& times) {
  if (!times) return std::nullopt;
  Result<CostFit> fit = fit_cost(*times);
  if (!fit.ok() || !(fit->us_per_byte > 0)) return std::nullopt;
  return *fit;
}

}  // namespace

std::vector<std::uint64_t> sizes_inside(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> out;
  // lo x 1.5, 2, 3, 4, 6, 8 ...: every step alternates x1.5 and x4/3.
  double step = static_cast<double>(lo) * 1.5;
  for (bool half = true; step < static_cast<double>(hi); half = !half) {
    const auto bytes = static_cast<std::uint64_t>(step);
    if (bytes > lo && bytes < hi) out.push_back(bytes);
    step *= half ? 4.0 / 3.0 : 1.5;
  }
  if (out.empty() && hi > lo + 1)
    out.push_back(static_cast<std::uint64_t>(std::sqrt(static_cast<double>(lo) * static_cast<double>(hi))));
  return out;
}

std::vector<std::uint64_t> between_grid_sizes(const std::vector<std::uint64_t>& grid) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i + 1 < grid.size(); ++i) {
    const std::uint64_t lo = grid[i], hi = grid[i + 1];
    for (const std::uint64_t bytes : {lo + lo / 2, hi - hi / 4})
      if (bytes > lo && bytes < hi && (out.empty() || out.back() != bytes)) out.push_back(bytes);
  }
  return out;
}

std::vector<bool> from_grid(const std::vector<std::uint64_t>& measured, const std::vector<std::uint64_t>& requested,
                            const std::vector<std::uint64_t>& grid) {
  std::vector<bool> out;
  for (const std::uint64_t bytes : measured) {
    const auto made_it = std::lower_bound(requested.begin(), requested.end(), bytes);
    out.push_back(made_it == requested.end() || std::binary_search(grid.begin(), grid.end(), *made_it));
  }
  return out;
}

std::optional<FittedLoss> worst_fitted_between(const std::vector<std::uint64_t>& sizes,
                                               const std::vector<double>& baseline_busbw,
                                               const std::vector<double>& candidate_busbw) {
  const std::size_t n = std::min({sizes.size(), baseline_busbw.size(), candidate_busbw.size()});
  std::optional<FittedLoss> worst;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (sizes[i + 1] <= sizes[i]) continue;
    // The gap's two points and one neighbour each side, as the crossover locator fits.
    const std::size_t first = i > kCrossoverFitNeighbours ? i - kCrossoverFitNeighbours : 0;
    const std::size_t last = std::min(n - 1, i + 1 + kCrossoverFitNeighbours);
    const auto base = fit_of(times_of(sizes, baseline_busbw, first, last));
    const auto cand = fit_of(times_of(sizes, candidate_busbw, first, last));
    if (!base || !cand) continue;
    for (const std::uint64_t bytes : sizes_inside(sizes[i], sizes[i + 1])) {
      const double b = base->time_us(static_cast<double>(bytes));
      const double c = cand->time_us(static_cast<double>(bytes));
      if (!(b > 0) || !(c > 0)) continue;  // a negative fitted latency below its points
      const double ratio = b / c;          // busbw ratio: the inverse of the time ratio
      if (!worst || ratio < worst->ratio) worst = FittedLoss{sizes[i], sizes[i + 1], bytes, ratio};
    }
  }
  return worst;
}

}  // namespace nccltune
