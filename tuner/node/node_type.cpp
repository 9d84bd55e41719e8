#include "node/node_type.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "topology/affinity.h"

namespace nccltune {

namespace {

std::string slug(std::string text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.rfind("nvidia ", 0) == 0) lower.erase(0, 7);
  std::string out;
  for (char c : lower) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
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
    type.nic =
        vendor + " " + nic.link_layer.value_or("?") + " " + std::to_string(type.nic_rate_gbps) + " Gb/s";
    std::optional<LinkKind> worst;
    for (const auto& a : assign_nearest_nics(topology))
      if (a.link && (!worst || a.link->kind > *worst)) worst = a.link->kind;
    if (worst) type.gpu_nic_affinity = std::string(to_string(*worst));
  }
  return type;
}

std::string node_type_key(const NodeType& type) {
  std::string key = slug(type.gpu) + "." + std::to_string(type.gpus) + "gpu";
  if (type.nvswitch.value_or(false))
    key += ".nvswitch";
  else if (type.nvlinks > 0)
    key += ".nvlink" + std::to_string(type.nvlinks);
  if (!type.nics) {
    key += ".nics-unknown";
  } else if (*type.nics == 0) {
    key += ".nonic";
  } else {
    key += "." + std::to_string(*type.nics) + "x" + (type.nic_ethernet ? "roce" : "ib") +
           std::to_string(type.nic_rate_gbps);
    if (!type.gpu_nic_affinity.empty()) key += "." + slug(type.gpu_nic_affinity);
  }
  key += ".nccl" + major_minor(type.nccl_version);
  return key;
}

NodeType local_node_type(const NodeTopology& topology, const std::string& nccl_version,
                         const std::string& cuda_driver) {
  return node_type(topology, DeviceFacts{}, static_cast<int>(topology.gpus.size()), nccl_version,
                   cuda_driver);
}

}  // namespace nccltune
