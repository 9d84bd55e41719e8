#include "mpi_runtime/node_layout.h"

#include <algorithm>

namespace nccltune {

Result<NodeLayout> node_layout(const std::vector<std::string>& host_of_rank, int rank, int emulate_nodes) {
  const int size = static_cast<int>(host_of_rank.size());
  NodeLayout layout;
  if (emulate_nodes > 0) {
    if (size % emulate_nodes != 0)
      return Error{"NCCLTUNE_EMULATE_NODES=" + std::to_string(emulate_nodes) + " does not divide " +
                   std::to_string(size) + " ranks into equal nodes"};
    layout.emulated = true;
    layout.nodes = emulate_nodes;
    layout.local_size = size / emulate_nodes;
    layout.node = rank / layout.local_size;
    layout.local_rank = rank % layout.local_size;
    for (int n = 0; n < emulate_nodes; ++n)
      layout.hosts.push_back(host_of_rank.at(0) + "-node" + std::to_string(n));
    return layout;
  }
  std::vector<int> node_of_rank(host_of_rank.size());
  for (int r = 0; r < size; ++r) {
    auto it = std::find(layout.hosts.begin(), layout.hosts.end(), host_of_rank[static_cast<size_t>(r)]);
    if (it == layout.hosts.end())
      it = layout.hosts.insert(layout.hosts.end(), host_of_rank[static_cast<size_t>(r)]);
    node_of_rank[static_cast<size_t>(r)] = static_cast<int>(it - layout.hosts.begin());
  }
  layout.nodes = static_cast<int>(layout.hosts.size());
  layout.node = node_of_rank.at(static_cast<size_t>(rank));
  layout.local_rank = 0;
  layout.local_size = 0;
  for (int r = 0; r < size; ++r) {
    if (node_of_rank[static_cast<size_t>(r)] != layout.node) continue;
    if (r < rank) ++layout.local_rank;
    ++layout.local_size;
  }
  return layout;
}

}  // namespace nccltune
