#include "topology/affinity.h"

#include <tuple>

namespace nccltune {

std::vector<NicAssignment> assign_nearest_nics(const NodeTopology& topology) {
  std::vector<NicAssignment> assignments;
  std::vector<int> load(topology.nics.size(), 0);
  for (const auto& gpu : topology.gpus) {
    NicAssignment best{gpu.index, std::nullopt, std::nullopt, false};
    std::tuple<int, int, int, int, int> best_key{};
    for (const auto& nic : topology.nics) {
      const DeviceLink* link = topology.find_link(gpu_id(gpu.index), nic_id(nic.index));
      if (!link) continue;
      const LinkKind kind = link->type.kind;
      const bool through_switch = kind <= LinkKind::pxb;
      const bool same_numa = gpu.numa && nic.numa && *gpu.numa == *nic.numa;
      const auto key = std::make_tuple(
          through_switch ? static_cast<int>(kind) : static_cast<int>(LinkKind::phb), same_numa ? 0 : 1,
          static_cast<int>(kind), load[static_cast<size_t>(nic.index)], nic.index);
      if (!best.nic || key < best_key) {
        best_key = key;
        best.nic = nic.index;
        best.link = link->type;
        best.numa_decided = !through_switch && same_numa && kind == LinkKind::sys;
      }
    }
    if (best.nic) ++load[static_cast<size_t>(*best.nic)];
    assignments.push_back(best);
  }
  return assignments;
}

std::map<std::string, std::string> nearest_nic_map(const std::vector<NicAssignment>& assignments) {
  std::map<std::string, std::string> map;
  for (const auto& a : assignments)
    if (a.nic) map[gpu_id(a.gpu)] = nic_id(*a.nic);
  return map;
}

}  // namespace nccltune
