// The sizes the confirmation of the tuner plugin should measure in a served per_size range
// (tune_profile/confirmation_sizes.h): the grid sizes inside it, its edges rounded inwards to whole
// elements, and half-octave steps from each grid size (1.5x, 2x, 3x, ...), the ones nearest an
// edge first when capped. The off-grid crossover model's range, 16K..4M-1 Tree/LL128 on a grid of every fourth power
// of two, is the running example: its loss was at 1.5M and 3M, which the grid never measures.
#include "tune_profile/confirmation_sizes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "search/trial.h"

namespace nccltune {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

// The final grid: every fourth power of two from 16 B to 64 MiB.
std::vector<std::uint64_t> final_grid() {
  return grid_sizes(SizeGrid{8, 64 * MiB, 4});
}

SizeChoice served(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  SizeChoice range;
  range.min_bytes = min_bytes;
  range.max_bytes = max_bytes;
  range.algo = "Tree";
  range.proto = "LL128";
  return range;
}

bool contains(const std::vector<std::uint64_t>& sizes, std::uint64_t bytes) {
  return std::find(sizes.begin(), sizes.end(), bytes) != sizes.end();
}

std::size_t off_grid_count(const std::vector<std::uint64_t>& sizes, const std::vector<std::uint64_t>& grid) {
  return static_cast<std::size_t>(
      std::count_if(sizes.begin(), sizes.end(), [&](std::uint64_t bytes) { return !contains(grid, bytes); }));
}

TEST(ConfirmationSizes, AnIssue50RangeIsMeasuredAtHalfOctavesAndAtItsTopEdge) {
  ConfirmationSizeOptions uncapped;
  uncapped.max_off_grid = 100;
  // From each grid size p inside (16K, 64K, 256K, 1M): p, 1.5p, 2p, 3p; then 4M - 1, rounded down
  // to whole 4-byte elements.
  const std::vector<std::uint64_t> expected{
      16 * KiB,  24 * KiB,  32 * KiB,  48 * KiB,  64 * KiB, 96 * KiB, 128 * KiB, 192 * KiB, 256 * KiB,
      384 * KiB, 512 * KiB, 768 * KiB, 1 * MiB,   3 * MiB / 2, 2 * MiB, 3 * MiB, 4 * MiB - 4};
  EXPECT_EQ(confirmation_sizes(served(16 * KiB, 4 * MiB - 1), final_grid(), uncapped), expected);
}

TEST(ConfirmationSizes, ACapKeepsTheGridAndTheOffGridSizesNearestAnEdge) {
  ConfirmationSizeOptions four;
  four.max_off_grid = 4;
  // Off the grid, by their distance (ratio) to the nearer edge: 4M-4 (the edge), 3M (1.33x
  // from it), 24K (1.5x from 16K), 2M (just under 2x from 4M-4), then 32K (2x) is left out.
  const std::vector<std::uint64_t> expected{16 * KiB, 24 * KiB, 64 * KiB, 256 * KiB, 1 * MiB,
                                            2 * MiB,  3 * MiB,  4 * MiB - 4};
  EXPECT_EQ(confirmation_sizes(served(16 * KiB, 4 * MiB - 1), final_grid(), four), expected);

  ConfirmationSizeOptions none;
  none.max_off_grid = 0;
  EXPECT_EQ(confirmation_sizes(served(16 * KiB, 4 * MiB - 1), final_grid(), none),
            (std::vector<std::uint64_t>{16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB}));
}

TEST(ConfirmationSizes, TheDefaultsMeasureWhereIssue50sRangeLost) {
  const std::vector<std::uint64_t> grid = final_grid();
  const std::vector<std::uint64_t> sizes = confirmation_sizes(served(16 * KiB, 4 * MiB - 1), grid);
  // 0.75x, 1.5x and 3x of 1M (the last grid size Tree/LL128 won), 0.75x of 4M, and the top edge.
  for (std::uint64_t bytes : {768 * KiB, 3 * MiB / 2, 3 * MiB, 4 * MiB - 4}) EXPECT_TRUE(contains(sizes, bytes)) << bytes;
  for (std::uint64_t bytes : {16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB}) EXPECT_TRUE(contains(sizes, bytes)) << bytes;
  EXPECT_EQ(off_grid_count(sizes, grid), ConfirmationSizeOptions{}.max_off_grid);
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
  EXPECT_EQ(std::adjacent_find(sizes.begin(), sizes.end()), sizes.end());
}

TEST(ConfirmationSizes, OffGridSizesAreWholeUnitsInsideTheRange) {
  // all_gather on 12 ranks of 4-byte elements: whole units of 48 bytes. The edges round inwards.
  ConfirmationSizeOptions units;
  units.align_bytes = 48;
  units.max_off_grid = 100;
  const std::vector<std::uint64_t> grid = final_grid();
  const std::vector<std::uint64_t> sizes = confirmation_sizes(served(64 * KiB, 1 * MiB - 1), grid, units);
  ASSERT_FALSE(sizes.empty());
  for (std::uint64_t bytes : sizes) {
    EXPECT_GE(bytes, 64 * KiB);
    EXPECT_LE(bytes, 1 * MiB - 1);
    if (!contains(grid, bytes)) {
      EXPECT_EQ(bytes % 48, 0u) << bytes;
    }
  }
  EXPECT_TRUE(contains(sizes, (64 * KiB + 47) / 48 * 48));  // the lower edge, rounded up
  EXPECT_TRUE(contains(sizes, (1 * MiB - 1) / 48 * 48));    // the upper edge, rounded down
  EXPECT_TRUE(contains(sizes, 64 * KiB));                    // the grid sizes as they are
  EXPECT_TRUE(contains(sizes, 256 * KiB));
}

TEST(ConfirmationSizes, TheFirstRangeStartsAtTheSmallestCallNotAtZero) {
  ConfirmationSizeOptions uncapped;
  uncapped.max_off_grid = 100;
  const std::vector<std::uint64_t> sizes = confirmation_sizes(served(0, 64 - 1), final_grid(), uncapped);
  // 0 bytes is no call: from one element (4), then 8, 12, the grid's 16, 24, 32, 48, the top 60.
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{4, 8, 12, 16, 24, 32, 48, 60}));
}

TEST(ConfirmationSizes, ARangeWithoutAWholeUnitInsideHasNoSizes) {
  EXPECT_TRUE(confirmation_sizes(served(0, 3), final_grid()).empty());
  EXPECT_TRUE(confirmation_sizes(served(5, 7), final_grid()).empty());
  EXPECT_TRUE(confirmation_sizes(served(10, 9), final_grid()).empty());  // not a range
  ConfirmationSizeOptions bytes;
  bytes.align_bytes = 0;  // taken as 1: the edges and 1.5x of the lower one
  EXPECT_EQ(confirmation_sizes(served(5, 7), {}, bytes), (std::vector<std::uint64_t>{5, 7}));
}

TEST(ConfirmationSizes, ARangeOfOneGridSizeIsThatSize) {
  EXPECT_EQ(confirmation_sizes(served(16 * KiB, 16 * KiB), final_grid()), (std::vector<std::uint64_t>{16 * KiB}));
}

TEST(ConfirmationSizes, TheStepsStartFromTheGridsOwnSizes) {
  // A grid ending at 48M: its sizes are 3 x powers of two (..., 48K, 192K, 768K, ...), and the steps
  // from each are 1.5x, 2x and 3x of it.
  ConfirmationSizeOptions uncapped;
  uncapped.max_off_grid = 100;
  const std::vector<std::uint64_t> grid = grid_sizes(SizeGrid{8, 48 * MiB, 4});
  ASSERT_TRUE(contains(grid, 48 * KiB) && contains(grid, 192 * KiB) && contains(grid, 768 * KiB));
  EXPECT_EQ(confirmation_sizes(served(48 * KiB, 768 * KiB - 1), grid, uncapped),
            (std::vector<std::uint64_t>{48 * KiB, 72 * KiB, 96 * KiB, 144 * KiB, 192 * KiB, 288 * KiB, 384 * KiB,
                                        576 * KiB, 768 * KiB - 4}));
}

TEST(ConfirmationSizes, AProfilesRangesMergeAscendingEachInsideItsOwn) {
  const std::vector<std::uint64_t> grid = final_grid();
  const std::vector<SizeChoice> per_size{served(0, 16 * KiB - 1), served(16 * KiB, 4 * MiB - 1),
                                         served(4 * MiB, 64 * MiB)};
  const std::vector<std::uint64_t> sizes = confirmation_sizes(per_size, grid);
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
  EXPECT_EQ(std::adjacent_find(sizes.begin(), sizes.end()), sizes.end());
  std::size_t total = 0;
  for (const SizeChoice& range : per_size) {
    const std::vector<std::uint64_t> own = confirmation_sizes(range, grid);
    total += own.size();
    for (std::uint64_t bytes : own) EXPECT_TRUE(contains(sizes, bytes)) << bytes;
  }
  EXPECT_EQ(sizes.size(), total);  // disjoint ranges share no size
  // Both sides of each boundary: 16K - 4 and 16K, 4M - 4 and 4M.
  for (std::uint64_t bytes : {16 * KiB - 4, 16 * KiB, 4 * MiB - 4, 4 * MiB}) EXPECT_TRUE(contains(sizes, bytes)) << bytes;
}

}  // namespace
}  // namespace nccltune
