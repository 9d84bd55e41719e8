#include "tune_profile/nccl_node_layout.h"

namespace nccltune {

namespace {

std::string counted(int count, const char* one, const char* many) {
  return std::to_string(count) + (count == 1 ? one : many);
}

}  // namespace

Result<NcclNodeLayout> nccl_node_layout(int hosts, int ranks_per_host, std::optional<int> nccl_nodes,
                                        std::optional<bool> mnnvl) {
  NcclNodeLayout layout{hosts, ranks_per_host, hosts, false};
  if (!mnnvl.value_or(false) || !nccl_nodes) {
    if (nccl_nodes && *nccl_nodes != hosts)
      return Error{"NCCL counted " + counted(*nccl_nodes, " node", " nodes") + " on " +
                   counted(hosts, " host", " hosts") + " without MNNVL (its comm line's nNodes)"};
    return layout;
  }
  if (*nccl_nodes < 1 || *nccl_nodes > hosts || hosts % *nccl_nodes != 0)
    return Error{"NCCL counted " + counted(*nccl_nodes, " NVLink domain", " NVLink domains") + " (MNNVL 1, nNodes " +
                 std::to_string(*nccl_nodes) + ") on " + counted(hosts, " host", " hosts") +
                 ": tune needs NVLink domains of equal numbers of hosts"};
  layout.nodes = *nccl_nodes;
  layout.mnnvl = true;
  return layout;
}

Result<NcclNodeLayout> subset_layout(int hosts, const NcclNodeLayout& whole) {
  if (!whole.mnnvl) return NcclNodeLayout{hosts, whole.ranks_per_host, hosts, false};
  if (hosts == 1) return NcclNodeLayout{1, whole.ranks_per_host, 1, false};
  const int per_domain = whole.hosts_per_node();
  if (hosts <= per_domain) return NcclNodeLayout{hosts, whole.ranks_per_host, 1, true};
  if (hosts % per_domain == 0) return NcclNodeLayout{hosts, whole.ranks_per_host, hosts / per_domain, true};
  return Error{"--node-counts: " + std::to_string(hosts) + " hosts are not whole NVLink domains of " +
               std::to_string(per_domain) + " hosts (MNNVL: NCCL counts a domain as one node)"};
}

ProfileShape nccl_counts(const NcclNodeLayout& layout) {
  ProfileShape shape;
  shape.nodes = layout.nodes;
  shape.gpus_per_node = layout.ranks_per_node();
  shape.ranks = layout.ranks();
  shape.hosts = layout.mnnvl ? layout.hosts : 0;
  shape.mnnvl = layout.mnnvl;
  return shape;
}

}  // namespace nccltune
