#include "bench_job/bench_peak_input.h"

#include "topology/peak_model.h"

namespace nccltune {

BenchPeak read_bench_peak(const std::string& from, const ReadOptions& options, const std::string& op,
                          std::optional<int> nodes, std::optional<int> ranks) {
  if (!nodes || !ranks || *nodes < 1 || *ranks < *nodes)
    return {std::nullopt, "the run's node and rank counts are not known (import: --nodes N --ranks N)"};
  if (*ranks % *nodes != 0)
    return {std::nullopt, std::to_string(*ranks) + " ranks do not spread evenly over " + std::to_string(*nodes) +
                              " nodes"};
  auto source = parse_topology_source(from);
  if (!source) return {std::nullopt, source.error()};
  auto topology = read_node_topology(*source, options);
  if (!topology) return {std::nullopt, topology.error()};
  LineRate peak = collective_peak(node_peak(*topology), op, *nodes, *ranks / *nodes);
  if (!peak.gbps) return {std::nullopt, peak.unknown_reason.value_or("not known")};
  return {peak.gbps, peak.bottleneck.value_or("?")};
}

}  // namespace nccltune
