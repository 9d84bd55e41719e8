#include "mpi_runtime/node_gather.h"

#include <nlohmann/json.hpp>

#include "topology/sources/topology_reader.h"
#include "tune_profile/cluster_shape.h"

namespace nccltune {

namespace {

using nlohmann::json;

std::string topology_source_for_node(const std::string& from, int node) {
  std::vector<std::string> entries;
  std::string::size_type start = 0;
  while (start <= from.size()) {
    const auto comma = from.find(',', start);
    entries.push_back(from.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return entries[static_cast<size_t>(node) % entries.size()];
}

json peak_to_json(const LineRate& peak) {
  return {{"gbps", peak.gbps ? json(*peak.gbps) : json(nullptr)},
          {"what", peak.gbps ? peak.bottleneck.value_or("") : peak.unknown_reason.value_or("not known")}};
}

LineRate peak_from_json(const json& j) {
  LineRate peak;
  if (j.at("gbps").is_null())
    peak.unknown_reason = j.at("what").get<std::string>();
  else
    peak = {j.at("gbps").get<double>(), j.at("what").get<std::string>(), {}};
  return peak;
}

// This node's message, from its first rank.
std::string describe_node(const JobRanks& ranks, const std::string& from,
                          const std::vector<std::string>& ops, const std::vector<int>& counts,
                          const DeviceFacts& device, const std::string& nccl_version,
                          const std::string& cuda_driver, std::optional<NodeTopology>& own) {
  const NodeLayout& layout = ranks.layout;
  std::string error;
  NodeTopology topology;
  std::map<int, std::map<std::string, LineRate>> peaks;
  if (auto source = parse_topology_source(topology_source_for_node(from, layout.node)); !source) {
    error = source.error();
  } else if (auto read = read_node_topology(*source, {}); !read) {
    error = read.error();
  } else {
    topology = std::move(read.value());
    for (const int count : counts)
      for (const std::string& op : ops)
        peaks[count][op] = collective_peak(node_peak(topology), op, count, layout.local_size);
    own = topology;
  }
  // The live machine only: a snapshot (--from) or emulated nodes stand for other GPUs.
  if (const auto problem =
          rank_per_gpu_problem(layout.hosts.at(static_cast<std::size_t>(layout.node)),
                               static_cast<int>(topology.gpus.size()), layout.local_size, layout.nodes);
      problem && error.empty() && from.empty() && !layout.emulated)
    error = *problem;
  json message = {{"node_type", node_type_to_json(node_type(topology, device, layout.local_size, nccl_version,
                                                            cuda_driver))},
                  {"error", error},
                  {"peaks", json::object()}};
  for (const int count : counts)
    for (const std::string& op : ops)
      message["peaks"][std::to_string(count)][op] = peak_to_json(peaks[count][op]);
  return message.dump(-1, ' ', false, json::error_handler_t::replace);  // an error may quote a path
}

}  // namespace

GatheredNodes gather_nodes(const JobRanks& ranks, const std::string& from,
                           const std::vector<std::string>& ops, const std::vector<int>& counts,
                           const DeviceFacts& device, const std::string& nccl_version,
                           const std::string& cuda_driver) {
  GatheredNodes nodes;
  const std::string mine = ranks.layout.local_rank == 0 ? describe_node(ranks, from, ops, counts, device,
                                                                        nccl_version, cuda_driver, nodes.own)
                                                        : std::string();
  for (const auto& text : ranks.group.gather(mine)) {
    if (text.empty()) continue;
    const json j = json::parse(text);
    for (const auto& [count, by_op] : j.at("peaks").items())
      for (const auto& [op, peak_json] : by_op.items()) {
        const LineRate peak = peak_from_json(peak_json);
        auto& lowest = nodes.peaks[std::stoi(count)];
        const auto seen = lowest.find(op);
        if (seen == lowest.end() || (seen->second.gbps && (!peak.gbps || *peak.gbps < *seen->second.gbps)))
          lowest[op] = peak;
      }
    if (const std::string error = j.at("error").get<std::string>(); !error.empty() && nodes.error.empty())
      nodes.error = error;
    Result<NodeType> type = parse_node_type(j.at("node_type").dump(), "a node's type");
    if (!type) {
      if (nodes.error.empty()) nodes.error = type.error();
      continue;
    }
    nodes.types.push_back(std::move(*type));
  }
  return nodes;
}

}  // namespace nccltune
