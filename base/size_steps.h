// The message sizes of a sweep, stepped as nccl-tests steps them (-b, -e, -f, -i): shared by the
// worker's sweep and the search's plan, so that what is planned is what is measured.
#pragma once

#include <cstdint>
#include <vector>

namespace nccltune {

// From min_bytes up to max_bytes: the next size is size * factor when factor > 1, else size +
// step_bytes. Ends early when a step makes no progress or overflows.
std::vector<std::uint64_t> size_steps(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                      std::uint64_t step_bytes);

}  // namespace nccltune
