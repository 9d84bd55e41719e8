#include "base/size_steps.h"

namespace nccltune {

std::vector<std::uint64_t> size_steps(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                      std::uint64_t step_bytes) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes; size <= max_bytes;) {
    sizes.push_back(size);
    const std::uint64_t next =
        factor > 1 ? static_cast<std::uint64_t>(static_cast<double>(size) * factor) : size + step_bytes;
    if (next <= size) break;  // no progress (or overflow)
    size = next;
  }
  return sizes;
}

}  // namespace nccltune
