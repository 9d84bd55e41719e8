#include "tune_profile/cluster_shape.h"

#include <algorithm>
#include <map>

namespace nccltune {

std::optional<std::string> rank_per_gpu_problem(const std::string& host, int gpus, int ranks_on_node,
                                                int nodes) {
  if (gpus <= 0 || gpus == ranks_on_node) return std::nullopt;
  return host + ": " + std::to_string(ranks_on_node) + " rank(s) on a node with " + std::to_string(gpus) +
         " GPUs; tune measures one rank per GPU, so run " + std::to_string(gpus) +
         " ranks per node (mpirun -np " + std::to_string(gpus * nodes) +
         ", or --from a snapshot of the GPUs in use)";
}

std::optional<bool> cluster_gdr(const std::vector<NodeType>& types) {
  // NCCL decides GPUDirect RDMA per node (each end registers its own buffers): its knobs act as soon
  // as one node has it, and on none only when every node is known to lack it.
  if (std::any_of(types.begin(), types.end(), [](const NodeType& t) { return t.gdr == true; })) return true;
  if (std::all_of(types.begin(), types.end(), [](const NodeType& t) { return t.gdr == false; })) return false;
  return std::nullopt;
}

Result<ClusterShape> cluster_shape(const std::vector<NodeType>& types, const std::vector<std::string>& hosts,
                                   bool allow_mixed) {
  if (types.empty()) return Error{"no nodes"};
  // The most common type is "the" type; the others are the odd ones.
  std::map<std::string, int> count;
  for (const auto& t : types) ++count[node_type_key(t)];
  const auto common =
      std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; });
  std::string odd;
  size_t reference = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string key = node_type_key(types[i]);
    if (key == common->first) {
      reference = i;
      continue;
    }
    odd += (odd.empty() ? "" : "; ") + (i < hosts.size() ? hosts[i] : "node " + std::to_string(i)) + " is " +
           key;
  }
  if (!odd.empty() && !allow_mixed)
    return Error{"the nodes are not alike (most are " + common->first + "): " + odd +
                 " (--allow-mixed to tune anyway)"};
  ClusterShape shape;
  shape.node = types[reference];
  shape.node.gdr = cluster_gdr(types);
  shape.nodes = static_cast<int>(types.size());
  shape.node_type_key = node_type_key(shape.node);
  shape.hosts = hosts;
  return shape;
}

ShapeFacts shape_facts(const ClusterShape& shape, int nccl_version_code) {
  ShapeFacts facts;
  const NcclNodeLayout nccl = shape.nccl();
  facts.nodes = nccl.nodes;
  facts.gpus_per_node = nccl.ranks_per_node();
  facts.nvswitch = shape.node.nvswitch.value_or(true);
  facts.nics = shape.node.nics.value_or(1) * nccl.hosts_per_node();
  // RDMA NICs (InfiniBand or RoCE) run NCCL's IB transport; none leave its Socket transport, and no
  // GPUDirect RDMA (search/nccl_acts.h). With them, GDR is what the nodes' topology says (NodeType's
  // gdr): unknown keeps the GDR knobs, as an unknown fact does.
  facts.ib = facts.nics > 0;
  facts.gdr = facts.ib ? shape.node.gdr : std::optional<bool>(false);
  facts.nccl_version = nccl_version_code;
  facts.gpu_sm = shape.node.gpu_sm;
  return facts;
}

}  // namespace nccltune
