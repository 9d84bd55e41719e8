#include "fleet/nvlink_domains.h"

#include <fmt/format.h>

#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

namespace nccltune {
namespace {

bool in_range(const GroupSample& group, std::size_t nodes) {
  for (int node : group.nodes)
    if (node < 0 || static_cast<std::size_t>(node) >= nodes) return false;
  return !group.nodes.empty();
}

// Union-find over node indexes; the root of a set is its lowest node.
struct NodeSets {
  std::vector<int> parent;
  explicit NodeSets(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int root(int node) const {
    while (parent[static_cast<std::size_t>(node)] != node) node = parent[static_cast<std::size_t>(node)];
    return node;
  }
  void join(int a, int b) {
    a = root(a);
    b = root(b);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }
};

using Fabric = std::tuple<std::string, std::uint32_t>;  // UUID, clique id

// Each node's fabric as it printed it alone (the local stage: the group is the node's own ranks).
std::vector<std::optional<Fabric>> fabrics_of_nodes(std::size_t nodes,
                                                    const std::vector<GroupSample>& local) {
  std::vector<std::optional<Fabric>> fabric(nodes);
  for (const GroupSample& group : local) {
    if (group.nodes.size() != 1 || !in_range(group, nodes) || group.fabric_uuid.empty() || !group.clique_id)
      continue;
    std::optional<Fabric>& own = fabric[static_cast<std::size_t>(group.nodes[0])];
    if (!own) own = Fabric{group.fabric_uuid, *group.clique_id};
  }
  return fabric;
}

}  // namespace

bool is_nvlink_pair(const GroupSample& pair) {
  return pair.nodes.size() == 2 && pair.nccl_nodes == 1 && pair.mnnvl == true;
}

const std::string& NvlinkDomains::name_of(int node) const {
  static const std::string none;
  if (of_node.empty() || node < 0 || static_cast<std::size_t>(node) >= of_node.size()) return none;
  return names[static_cast<std::size_t>(of_node[static_cast<std::size_t>(node)])];
}

NvlinkDomains nvlink_domains(std::size_t nodes, const std::vector<GroupSample>& local,
                             const std::vector<GroupSample>& pairs) {
  NodeSets sets(nodes);
  bool any_nvlink = false;
  for (const GroupSample& pair : pairs)
    if (is_nvlink_pair(pair) && in_range(pair, nodes) && pair.nodes[0] != pair.nodes[1]) {
      sets.join(pair.nodes[0], pair.nodes[1]);
      any_nvlink = true;
    }
  NvlinkDomains domains;
  if (!any_nvlink) return domains;
  const std::vector<std::optional<Fabric>> fabric = fabrics_of_nodes(nodes, local);
  std::map<Fabric, int> first_on;
  for (std::size_t node = 0; node < nodes; ++node)
    if (fabric[node]) {
      const auto [at, added] = first_on.emplace(*fabric[node], static_cast<int>(node));
      if (!added) sets.join(at->second, static_cast<int>(node));
    }

  // Number the domains by their lowest node, and gather each one's fabrics for its name.
  std::map<int, int> index_of_root;
  std::vector<std::set<Fabric>> fabrics_in;
  for (std::size_t node = 0; node < nodes; ++node) {
    const auto [at, added] =
        index_of_root.emplace(sets.root(static_cast<int>(node)), static_cast<int>(index_of_root.size()));
    if (added) fabrics_in.emplace_back();
    domains.of_node.push_back(at->second);
    if (fabric[node]) fabrics_in[static_cast<std::size_t>(at->second)].insert(*fabric[node]);
  }
  std::set<std::uint32_t> cliques;
  bool by_clique = true;
  for (const std::set<Fabric>& found : fabrics_in) {
    by_clique = by_clique && found.size() == 1 && cliques.insert(std::get<1>(*found.begin())).second;
  }
  for (std::size_t d = 0; d < fabrics_in.size(); ++d)
    domains.names.push_back(by_clique ? fmt::format("clique {:#x}", std::get<1>(*fabrics_in[d].begin()))
                                      : fmt::format("domain {}", d));
  return domains;
}

}  // namespace nccltune
