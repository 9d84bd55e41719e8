// A profile's per-size choices as ranges of message sizes: built from the best choice at each
// measured size, and looked up by size (show, report, diff, the tuner plugin).
#pragma once

#include <cstdint>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// Merges adjacent sizes with the same (algo, proto, channels) into ranges. `sizes` and
// `per_size_best` are parallel (the choices' own min/max_bytes are ignored; extra entries of the
// longer one are ignored; pairs are taken in ascending size order). The first range starts at 0,
// each range ends at the next range's first size - 1, and the last at
// the largest size: above what was measured, NCCL's own choice stands.
std::vector<SizeChoice> size_ranges(const std::vector<std::uint64_t>& sizes,
                                    const std::vector<SizeChoice>& per_size_best);

// The range that holds `bytes`, or nullptr (ranges ascending and disjoint, as parse_profile
// guarantees).
const SizeChoice* choice_for_size(const std::vector<SizeChoice>& per_size, std::uint64_t bytes);

}  // namespace nccltune
