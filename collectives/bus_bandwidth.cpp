#include "collectives/bus_bandwidth.h"

namespace nccltune {

double algorithm_bandwidth_gbps(double bytes, double time_us) {
  if (time_us <= 0) return 0;
  return bytes / (time_us * 1e-6) / 1e9;
}

double bus_bandwidth_factor(std::string_view collective, int ranks) {
  if (ranks <= 0) return 0;
  const double n = ranks;
  if (collective == "all_reduce") return 2 * (n - 1) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall")
    return (n - 1) / n;
  if (collective == "broadcast" || collective == "reduce") return 1;
  return 0;
}

double bus_bandwidth_gbps(std::string_view collective, int ranks, std::uint64_t bytes, double time_us) {
  return algorithm_bandwidth_gbps(static_cast<double>(bytes), time_us) *
         bus_bandwidth_factor(collective, ranks);
}

}  // namespace nccltune
