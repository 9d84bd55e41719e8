#include "profile/size_ranges.h"

#include <algorithm>
#include <utility>

namespace nccltune {

std::vector<SizeChoice> size_ranges(const std::vector<std::uint64_t>& sizes,
                                    const std::vector<SizeChoice>& per_size_best) {
  std::vector<std::pair<std::uint64_t, SizeChoice>> points;
  for (std::size_t i = 0; i < std::min(sizes.size(), per_size_best.size()); ++i)
    points.emplace_back(sizes[i], per_size_best[i]);
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SizeChoice> ranges;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& [bytes, best] = points[i];
    if (i > 0 && points[i - 1].first == bytes) continue;  // a size measured twice: the first counts
    if (!ranges.empty() && ranges.back().algo == best.algo && ranges.back().proto == best.proto &&
        ranges.back().channels == best.channels)
      continue;
    if (!ranges.empty()) ranges.back().max_bytes = bytes - 1;
    SizeChoice range;
    range.min_bytes = ranges.empty() ? 0 : bytes;
    range.algo = best.algo;
    range.proto = best.proto;
    range.channels = best.channels;
    ranges.push_back(std::move(range));
  }
  if (!ranges.empty()) ranges.back().max_bytes = points.back().first;
  return ranges;
}

const SizeChoice* choice_for_size(const std::vector<SizeChoice>& per_size, std::uint64_t bytes) {
  for (const SizeChoice& choice : per_size)
    if (choice.min_bytes <= bytes && bytes <= choice.max_bytes) return &choice;
  return nullptr;
}

}  // namespace nccltune
