#include "tune_profile/confirmation_sizes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace nccltune {

namespace {

// How far `bytes` lies from the nearer edge of [low, high], as a log of the ratio.
double distance_to_edge(std::uint64_t bytes, std::uint64_t low, std::uint64_t high) {
  const auto x = static_cast<double>(bytes);
  return std::min(std::log(x / static_cast<double>(low)), std::log(static_cast<double>(high) / x));
}

}  // namespace

std::vector<std::uint64_t> confirmation_sizes(const SizeChoice& range, const std::vector<std::uint64_t>& grid,
                                              const ConfirmationSizeOptions& options) {
  const std::uint64_t align = std::max<std::uint64_t>(1, options.align_bytes);
  const std::uint64_t smallest = std::max<std::uint64_t>(1, range.min_bytes);
  if (range.max_bytes < smallest || smallest > std::numeric_limits<std::uint64_t>::max() - (align - 1)) return {};
  const std::uint64_t low = (smallest + align - 1) / align * align;  // the edges, rounded inwards
  const std::uint64_t high = range.max_bytes / align * align;
  if (high < low) return {};

  std::set<std::uint64_t> on_grid;
  for (std::uint64_t bytes : grid)
    if (bytes >= smallest && bytes <= range.max_bytes) on_grid.insert(bytes);

  // Half-octave steps from each anchor (the lower edge, then every grid size above it) up to the
  // next anchor: a, 1.5a, 2a, 3a, 4a, ... each rounded down to whole units.
  std::vector<std::uint64_t> anchors{low};
  for (std::uint64_t bytes : on_grid)
    if (bytes > low && bytes <= high) anchors.push_back(bytes);
  std::set<std::uint64_t> off_grid{low, high};
  for (std::size_t k = 0; k < anchors.size(); ++k) {
    const std::uint64_t anchor = anchors[k];
    const std::uint64_t last = k + 1 < anchors.size() ? anchors[k + 1] - 1 : high;
    for (std::uint64_t step = anchor; step <= last;) {
      const std::uint64_t half = step / 2;
      const bool fits = step <= std::numeric_limits<std::uint64_t>::max() - half;
      for (std::uint64_t bytes : {step, fits ? step + half : step}) {
        bytes = bytes / align * align;
        if (bytes > anchor && bytes <= last && bytes >= low) off_grid.insert(bytes);
      }
      if (step > std::numeric_limits<std::uint64_t>::max() / 2) break;
      step *= 2;
    }
  }
  for (std::uint64_t bytes : on_grid) off_grid.erase(bytes);

  std::vector<std::uint64_t> ranked(off_grid.begin(), off_grid.end());
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::uint64_t a, std::uint64_t b) {
    const double da = distance_to_edge(a, low, high), db = distance_to_edge(b, low, high);
    return da != db ? da < db : a > b;
  });
  if (ranked.size() > options.max_off_grid) ranked.resize(options.max_off_grid);
  std::set<std::uint64_t> sizes = on_grid;
  sizes.insert(ranked.begin(), ranked.end());
  return {sizes.begin(), sizes.end()};
}

std::vector<std::uint64_t> confirmation_sizes(const std::vector<SizeChoice>& per_size,
                                              const std::vector<std::uint64_t>& grid,
                                              const ConfirmationSizeOptions& options) {
  std::set<std::uint64_t> sizes;
  for (const SizeChoice& range : per_size) {
    const std::vector<std::uint64_t> own = confirmation_sizes(range, grid, options);
    sizes.insert(own.begin(), own.end());
  }
  return {sizes.begin(), sizes.end()};
}

}  // namespace nccltune
