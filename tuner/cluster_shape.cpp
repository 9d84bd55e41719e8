#include "cluster_shape.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "affinity.h"

namespace nccltune {

namespace {

std::string slug(std::string text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.rfind("nvidia ", 0) == 0) lower.erase(0, 7);
  std::string out;
  for (char c : lower) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-gpu" : out;
}

std::string major_minor(const std::string& version) {
  const auto first = version.find('.');
  if (first == std::string::npos) return version;
  const auto second = version.find('.', first + 1);
  return version.substr(0, second);
}

}  // namespace

NodeType node_type(const NodeTopology& topology, const DeviceFacts& device, int ranks_on_node,
                   const std::string& nccl_version, const std::string& cuda_driver) {
  NodeType type;
  type.nccl_version = nccl_version;
  type.cuda_driver = cuda_driver;
  type.gpu_sm = device.sm;
  if (topology.gpus.empty()) {
    // The topology does not describe the GPUs the workers use: only what CUDA said is known.
    type.gpu = device.name;
    type.gpus = ranks_on_node;
    return type;
  }
  type.gpus = static_cast<int>(topology.gpus.size());
  type.gpu = topology.gpus.front().name.value_or(device.name);
  if (!type.gpu_sm && topology.gpus.front().sm) type.gpu_sm = *topology.gpus.front().sm;
  type.nvswitch = topology.nvswitch;
  type.nvlinks = topology.gpus.front().nvlinks.value_or(0);
  type.nics = static_cast<int>(topology.nics.size());
  if (!topology.nics.empty()) {
    const Nic& nic = topology.nics.front();
    const std::string vendor = nic.name ? nic.name->substr(0, nic.name->find('_')) : "nic";
    type.nic_ethernet = nic.link_layer == "Ethernet";
    type.nic_rate_gbps = nic.rate_gbps ? static_cast<int>(std::lround(*nic.rate_gbps)) : 0;
    type.nic = vendor + " " + nic.link_layer.value_or("?") + " " + std::to_string(type.nic_rate_gbps) + " Gb/s";
    std::optional<LinkKind> worst;
    for (const auto& a : assign_nearest_nics(topology))
      if (a.link && (!worst || a.link->kind > *worst)) worst = a.link->kind;
    if (worst) type.gpu_nic_affinity = std::string(to_string(*worst));
  }
  return type;
}

std::optional<std::string> rank_per_gpu_problem(const std::string& host, int gpus, int ranks_on_node, int nodes) {
  if (gpus <= 0 || gpus == ranks_on_node) return std::nullopt;
  return host + ": " + std::to_string(ranks_on_node) + " rank(s) on a node with " + std::to_string(gpus) +
         " GPUs; tune measures one rank per GPU, so run " + std::to_string(gpus) + " ranks per node (mpirun -np " +
         std::to_string(gpus * nodes) + ", or --from a snapshot of the GPUs in use)";
}

std::string node_type_key(const NodeType& type) {
  std::string key = slug(type.gpu) + "." + std::to_string(type.gpus) + "gpu";
  if (type.nvswitch.value_or(false)) key += ".nvswitch";
  else if (type.nvlinks > 0) key += ".nvlink" + std::to_string(type.nvlinks);
  if (!type.nics) {
    key += ".nics-unknown";
  } else if (*type.nics == 0) {
    key += ".nonic";
  } else {
    key += "." + std::to_string(*type.nics) + "x" + (type.nic_ethernet ? "roce" : "ib") + std::to_string(type.nic_rate_gbps);
    if (!type.gpu_nic_affinity.empty()) key += "." + slug(type.gpu_nic_affinity);
  }
  key += ".nccl" + major_minor(type.nccl_version);
  return key;
}

Result<ClusterShape> cluster_shape(const std::vector<NodeType>& types, const std::vector<std::string>& hosts,
                                   bool allow_mixed) {
  if (types.empty()) return Error{"no nodes"};
  // The most common type is "the" type; the others are the odd ones.
  std::map<std::string, int> count;
  for (const auto& t : types) ++count[node_type_key(t)];
  const auto common = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; });
  std::string odd;
  size_t reference = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string key = node_type_key(types[i]);
    if (key == common->first) {
      reference = i;
      continue;
    }
    odd += (odd.empty() ? "" : "; ") + (i < hosts.size() ? hosts[i] : "node " + std::to_string(i)) + " is " + key;
  }
  if (!odd.empty() && !allow_mixed)
    return Error{"the nodes are not alike (most are " + common->first + "): " + odd + " (--allow-mixed to tune anyway)"};
  ClusterShape shape;
  shape.node = types[reference];
  shape.nodes = static_cast<int>(types.size());
  shape.key = node_type_key(shape.node);
  shape.hosts = hosts;
  return shape;
}

}  // namespace nccltune
