// Whether a candidate env loses to NCCL's defaults at sizes between the grid's. The
// final grid is every fourth power of two, and an env knob's effect can depend on size: a list
// that takes LL128 away changes NCCL's choice from one size on, wherever that falls, and a job at
// 3 MiB never meets a grid point. So the confirmation also measures the sizes at 1.5x and 3x of
// each grid size (between_grid_sizes: 0.75x of the next), and between every two measured sizes
// the env and the defaults are each fitted with NCCL's own cost model (time = latency + bytes /
// bandwidth, search/crossover.h; the gap's two points and a neighbour on each side, as the
// crossover locator fits the pairs) and compared at sizes inside the gap.
//
// The ratio of two fitted lines is monotone between two sizes, so by the fit the worst size of a
// gap is near one of its ends: the fit adds the trend of the neighbours to the measured points. A
// single measurement that the noise favoured (0.99x at 4M) does not hide a loss the points around
// it agree on (0.95x by the fit at 3M).
//
// Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace nccltune {

// Where the fitted candidate runs slowest against the fitted baseline inside one gap.
struct FittedLoss {
  std::uint64_t lo = 0, hi = 0;  // the measured sizes around it
  std::uint64_t bytes = 0;       // the size inside (lo, hi) where the ratio is worst
  double ratio = 1;              // candidate busbw / baseline busbw there, by the fits
};

// The sizes strictly inside (lo, hi) at which a gap is compared: lo x 1.5, x 2, x 3, x 4, x 6 ...
// (half-octave steps, as the confirmation's off-grid sizes) below hi; the geometric middle when no
// step fits (a gap narrower than 1.5x).
std::vector<std::uint64_t> sizes_inside(std::uint64_t lo, std::uint64_t hi);

// The sizes between adjacent `grid` sizes (ascending) that the confirmation measures too: 1.5x of
// each grid size and 0.75x of the next (3x for a gap of 4x), where they lie strictly between and
// are not alike; ascending, without the grid's own sizes.
std::vector<std::uint64_t> between_grid_sizes(const std::vector<std::uint64_t>& grid);

// Which of `measured` (a sweep's sizes, one collective's or several, each rounded down from a
// requested size to whole elements) came from a size of `grid` rather than one between: the
// requested size that made a point is the smallest requested size at or above it (a rounding
// moves a size by less than one element per rank, never past the size requested before it).
// `requested`: every size the trial asked for, ascending.
std::vector<bool> from_grid(const std::vector<std::uint64_t>& measured, const std::vector<std::uint64_t>& requested,
                            const std::vector<std::uint64_t>& grid);

// The worst fitted ratio over every gap of one collective's points (`sizes` strictly ascending,
// busbw per size for the baseline and the candidate, GB/s; the busbw factor of a collective is
// one constant, so bytes / busbw is its time up to that factor). A gap whose points or fits
// cannot say (a busbw of 0, a fitted time that does not grow with size: a latency floor where the
// line is not NCCL's model) is skipped. nullopt when no gap could be compared.
std::optional<FittedLoss> worst_fitted_between(const std::vector<std::uint64_t>& sizes,
                                               const std::vector<double>& baseline_busbw,
                                               const std::vector<double>& candidate_busbw);

}  // namespace nccltune
