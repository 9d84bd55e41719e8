// ClusterShape: the cluster a tune run measures: N nodes of one NodeType. Unlike nodes are refused
// (or, with --allow-mixed, the most common type stands for all).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "node/node_type.h"
#include "search/shape_condition.h"
#include "tune_profile/nccl_node_layout.h"

namespace nccltune {

// tune measures one rank per GPU, and a profile says it is for `gpus` ranks per node (the
// plugin and env match jobs by that): why a node whose topology shows `gpus` GPUs but runs
// `ranks_on_node` ranks cannot be tuned, or nullopt when they agree (or no GPU is seen).
std::optional<std::string> rank_per_gpu_problem(const std::string& host, int gpus, int ranks_on_node,
                                                int nodes);

struct ClusterShape {
  NodeType node;
  int nodes = 1;
  std::string node_type_key;  // node_type_key(node)
  std::vector<std::string> hosts;
  // How NCCL counts these hosts' nodes: one per host (0) until the world's log says MNNVL, then
  // its NVLink domains (tune_job sets them from its logs). What the profile is written and served in.
  int nccl_nodes = 0;
  bool mnnvl = false;
  NcclNodeLayout nccl() const { return {nodes, node.gpus, nccl_nodes > 0 ? nccl_nodes : nodes, mnnvl}; }
  void set_nccl(const NcclNodeLayout& layout) {
    nccl_nodes = layout.nodes;
    mnnvl = layout.mnnvl;
  }
};

// Whether NCCL has GPUDirect RDMA on some of these nodes (NodeType's gdr): true when one node has
// it, false when every node is known to lack it, nullopt otherwise.
std::optional<bool> cluster_gdr(const std::vector<NodeType>& types);

// One shape from every node's type; unlike nodes are an error listing the odd ones, unless
// `allow_mixed` (then the first node's type stands for all). Its node's gdr is cluster_gdr's.
Result<ClusterShape> cluster_shape(const std::vector<NodeType>& types, const std::vector<std::string>& hosts,
                                   bool allow_mixed);

// The facts the search space's conditions read, per node as NCCL counts nodes (an NVLink domain's
// GPUs and NICs are one node's). Facts the topology could not give never prune a
// knob (NVSwitch and NICs count as present): the search then explores rather than guesses.
ShapeFacts shape_facts(const ClusterShape& shape, int nccl_version_code);

}  // namespace nccltune
