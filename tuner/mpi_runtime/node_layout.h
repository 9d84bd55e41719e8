// How the ranks of a job sit on nodes: real hosts, or emulated nodes (NCCLTUNE_EMULATE_NODES=N:
// consecutive equal blocks of ranks act as N nodes, so the multi-node paths run on one machine).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace nccltune {

struct NodeLayout {
  int node = 0;  // this rank's node index
  int nodes = 1;
  int local_rank = 0;  // device = node-local rank
  int local_size = 1;
  std::vector<std::string> hosts;  // one name per node, in node order
  bool emulated = false;
};

// Pure: groups ranks by host name (first appearance order), or into `emulate` equal blocks.
Result<NodeLayout> node_layout(const std::vector<std::string>& host_of_rank, int rank, int emulate_nodes);

}  // namespace nccltune
