// What each node brings to a tune run: each node's first rank reads the node's topology (live,
// or `--from`) and sends its NodeType (node/node_type.h's one wire format) and the hardware peak
// of each measured collective at each measured node count as that node sees it; every rank gets
// them all (one message per node, whatever its ranks).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mpi_runtime/job_ranks.h"
#include "node/node_type.h"
#include "topology/node_topology.h"
#include "topology/peak_model.h"

namespace nccltune {

struct GatheredNodes {
  std::vector<NodeType> types;  // one per node, in node order
  // Per node count and collective the lowest node's peak (unknown when any node's is): the
  // slowest node bounds every collective.
  std::map<int, std::map<std::string, LineRate>> peaks;
  std::optional<NodeTopology> own;  // the topology this rank read, if it read one
  std::string error;                // the first node's error (a bad --from, a rank per GPU...)
};

// `from`: the topology source of every node ("A,B,...": node i replays entry i modulo the count,
// so one machine can emulate a cluster of unlike nodes). `device`: what the probe's worker saw.
GatheredNodes gather_nodes(const JobRanks& ranks, const std::string& from,
                           const std::vector<std::string>& ops, const std::vector<int>& counts,
                           const DeviceFacts& device, const std::string& nccl_version,
                           const std::string& cuda_driver);

}  // namespace nccltune
