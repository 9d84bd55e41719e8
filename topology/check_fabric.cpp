#include "topology/check_fabric.h"

#include <map>
#include <string>
#include <type_traits>

namespace nccltune {
namespace {

std::string domain_text(const GpuFabric& fabric) {
  return "cluster " + fabric.cluster_uuid.value_or("?") + " clique " +
         (fabric.clique_id ? std::to_string(*fabric.clique_id) : std::string("?"));
}

void check_registration(const Gpu& gpu, const GpuFabric& fabric, std::vector<Finding>& out) {
  const std::string subject = gpu_id(gpu.index);
  if (fabric.state != FabricState::completed) {
    out.push_back(
        {"nvlink_fabric", subject, Verdict::fail,
         "fabric registration " + std::string(to_string(fabric.state)) +
             ", not completed: NCCL leaves the GPU out of the NVLink domain (MNNVL) and CUDA cannot "
             "use its NVLinks until the NVLink fabric manager registers it (nvidia-fabricmanager on "
             "an HGX node, the switch trays' on NVL72)"});
    return;
  }
  if (fabric.status_failed()) {
    out.push_back({"nvlink_fabric", subject, Verdict::fail,
                   "fabric registration completed with status '" + *fabric.status +
                       "', not Success: the GPU is not usable over the NVLink fabric"});
    return;
  }
  out.push_back({"nvlink_fabric", subject, Verdict::pass,
                 "registered (completed, " + fabric.status.value_or("status unknown") + "), " +
                     domain_text(fabric) +
                     (fabric.in_multi_node_domain() ? ": multi-node NVLink (MNNVL)" : "")});
}

void check_health(const Gpu& gpu, const GpuFabric& fabric, std::vector<Finding>& out) {
  if (!fabric.health_mask && !fabric.summary) return;  // the driver reports no health
  const std::string subject = gpu_id(gpu.index);
  const auto problems = fabric_health_problems(fabric);
  for (const auto& problem : problems)
    out.push_back(
        {"fabric_health", subject, Verdict::warn,
         problem.field + ": " + problem.meaning +
             (fabric.health_mask ? " (health mask " + health_mask_text(*fabric.health_mask) + ")" : "")});
  if (problems.empty())
    out.push_back({"fabric_health", subject, Verdict::pass,
                   "no health condition reported" +
                       (fabric.health_mask ? " (health mask " + health_mask_text(*fabric.health_mask) + ")"
                                           : std::string())});
}

// The GPUs of each value of one field, "GPU0, GPU1 = 32766; GPU2 = 7", when they disagree.
template <class Key>
std::string disagreement(const std::map<Key, std::string>& groups) {
  std::string out;
  for (const auto& [value, gpus] : groups) {
    std::string text;
    if constexpr (std::is_same_v<Key, std::string>)
      text = value;
    else
      text = std::to_string(value);
    out += (out.empty() ? "" : "; ") + gpus + " " + text;
  }
  return out;
}

// Among the GPUs registered in a multi-node domain, one cluster UUID and one clique id.
void check_domain(const NodeTopology& topology, std::vector<Finding>& out) {
  std::map<std::string, std::string> by_cluster;
  std::map<std::uint32_t, std::string> by_clique;
  int members = 0;
  const GpuFabric* first = nullptr;
  for (const auto& gpu : topology.gpus) {
    if (!gpu.fabric || !gpu.fabric->in_multi_node_domain()) continue;
    ++members;
    if (!first) first = &*gpu.fabric;
    auto& cluster = by_cluster[*gpu.fabric->cluster_uuid];
    cluster += (cluster.empty() ? "" : ", ") + gpu_id(gpu.index);
    if (gpu.fabric->clique_id) {
      auto& clique = by_clique[*gpu.fabric->clique_id];
      clique += (clique.empty() ? "" : ", ") + gpu_id(gpu.index);
    }
  }
  if (members == 0) return;
  if (by_cluster.size() > 1) {
    out.push_back({"nvlink_domain", "node", Verdict::fail,
                   "GPUs disagree on the fabric's cluster_uuid (" + disagreement(by_cluster) +
                       "): NCCL puts GPUs in one NVLink domain only when it matches"});
    return;
  }
  if (by_clique.size() > 1) {
    out.push_back({"nvlink_domain", "node", Verdict::fail,
                   "GPUs disagree on the fabric's clique_id (" + disagreement(by_clique) +
                       "): NCCL puts GPUs in one MNNVL clique only when it matches"});
    return;
  }
  out.push_back({"nvlink_domain", "node", Verdict::pass,
                 std::to_string(members) + " GPUs in one multi-node NVLink domain, " + domain_text(*first)});
}

}  // namespace

void check_fabric(const NodeTopology& topology, std::vector<Finding>& out) {
  for (const auto& gpu : topology.gpus) {
    if (!gpu.fabric) continue;
    check_registration(gpu, *gpu.fabric, out);
    check_health(gpu, *gpu.fabric, out);
  }
  check_domain(topology, out);
}

}  // namespace nccltune
