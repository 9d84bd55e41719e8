// The data check, on the host: fills send data from a DataPattern and counts the received
// elements that differ from what a CollectiveSpec promises (nccl-tests' #wrong). Works on one
// chunk at a time, so that large buffers pass through a small host staging buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "collectives/collective_spec.h"
#include "collectives/data_pattern.h"

namespace nccltune {

// Writes rank `rank`'s send elements first, first + 1, ... into `out` (whole elements).
void fill_send_elements(const DataPattern& pattern, int rank, std::size_t first, std::span<std::byte> out);

// Counts the elements of `received`, which are rank `rank`'s receive elements first, first + 1,
// ..., that differ from what `spec` promises. NaN is always wrong.
int64_t count_wrong_elements(const CollectiveSpec& spec, const BufferLayout& layout,
                             const DataPattern& pattern, int rank, int root, std::size_t first,
                             std::span<const std::byte> received);

}  // namespace nccltune
