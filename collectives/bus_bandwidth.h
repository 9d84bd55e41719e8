// Bandwidth arithmetic, as nccl-tests defines it (GB/s = 1e9 B/s).
#pragma once

#include <cstdint>
#include <string_view>

namespace nccltune {

// algbw = bytes / time.
double algorithm_bandwidth_gbps(double bytes, double time_us);

// busbw factor of a collective for `ranks` ranks: all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, alltoall (n-1)/n; broadcast, reduce 1. Returns 0 for an unknown collective.
double bus_bandwidth_factor(std::string_view collective, int ranks);

// busbw of one size of a trial: algbw x the collective's factor; what bench prints and tune
// scores. `collective` is nccl-tests' name ("all_reduce").
double bus_bandwidth_gbps(std::string_view collective, int ranks, std::uint64_t bytes, double time_us);

}  // namespace nccltune
