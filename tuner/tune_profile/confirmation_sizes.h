// The sizes at which the confirmation of the tuner plugin measures a served per_size range. On the
// final grid alone, the very sizes the range was built from, the A/B rounds
// (tune_profile/plugin_confirmation.h) confirmed a range that loses between two grid points
// (Tree/LL128 served from 16K to 4M-1, 0.60x of NCCL's own choice at 3 MiB). Jobs ask
// for any size: DDP buckets of 25 MiB, FSDP shards and activations of whatever the model's shapes
// make.
//
// So a range is measured inside, at its edges and off the grid: from the range's lower edge and
// from each grid size inside it, the multiples 1.5x, 2x, 3x, 4x, 6x ... (half-octave steps) up to
// the next grid size or the range's upper edge. On a grid of every fourth power of two that is
// 16K, 24K, 32K, 48K, 64K, 96K, ... 3M and the top edge 4M - 1 for a range 16K..4M-1: the sizes
// at 0.75x, 1.5x and 3x of each grid point, where a choice that switched at the wrong grid point
// loses most.
//
// Pure functions; tune/plugin_rounds.cpp measures these sizes besides the grid in every A/B round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

struct ConfirmationSizeOptions {
  // Every size is a whole number of this many bytes: what the sweep can run (collectives/: bytes /
  // element size elements; all_gather and reduce_scatter also a whole number per rank, so the
  // element size times the rank count there). 0 is taken as 1.
  std::uint64_t align_bytes = 4;
  // Per range, at most this many sizes that are not grid sizes (each one more point in every A/B
  // round). The grid sizes inside the range always stay: the rounds measure them anyway.
  std::size_t max_off_grid = 8;
};

// The sizes to measure inside `range` ([min_bytes, max_bytes], a size of 0 excluded: no call),
// ascending, without repeats: every size of `grid` inside it, and of the off-grid sizes (the edges,
// rounded inwards to align_bytes, and the half-octave steps, rounded down) the max_off_grid nearest
// an edge by ratio (ties: the larger first): where one range gives way to the next, a choice that
// switches at the wrong place loses. Empty when no aligned size lies inside the range.
std::vector<std::uint64_t> confirmation_sizes(const SizeChoice& range, const std::vector<std::uint64_t>& grid,
                                              const ConfirmationSizeOptions& options = {});

// Every range's sizes (per_size as a profile holds it: ascending, disjoint), merged ascending.
std::vector<std::uint64_t> confirmation_sizes(const std::vector<SizeChoice>& per_size,
                                              const std::vector<std::uint64_t>& grid,
                                              const ConfirmationSizeOptions& options = {});

}  // namespace nccltune
