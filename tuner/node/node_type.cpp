#include "node/node_type.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "base/json_optional.h"
#include "base/printable_text.h"
#include "base/strict_yaml.h"
#include "topology/affinity.h"
#include "topology/gpudirect.h"

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

// All the GPUs in one multi-node NVLink domain and clique, as NCCL's MNNVL needs them.
bool all_gpus_in_one_mnnvl_clique(const NodeTopology& topology) {
  if (topology.gpus.empty()) return false;
  const auto& first = topology.gpus.front().fabric;
  return std::all_of(topology.gpus.begin(), topology.gpus.end(), [&](const Gpu& gpu) {
    return gpu.fabric && gpu.fabric->in_multi_node_domain() &&
           gpu.fabric->cluster_uuid == first->cluster_uuid && gpu.fabric->clique_id == first->clique_id;
  });
}

// Whether NCCL can register GPU memory with the NICs: the first of GPUDirect RDMA's conditions, as
// `check` judges it (gdr_peer_memory); unknown when the modules and dma-buf's facts were not read.
std::optional<bool> nics_take_gpu_memory(const NodeTopology& topology) {
  if (topology.gpus.empty() || topology.nics.empty()) return std::nullopt;
  switch (gdr_memory(topology).how) {
    case GdrRegistration::peer_memory:
    case GdrRegistration::dma_buf: return true;
    case GdrRegistration::none: return false;
    case GdrRegistration::unknown: return std::nullopt;
  }
  return std::nullopt;
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
  type.mnnvl = all_gpus_in_one_mnnvl_clique(topology);
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
  type.gdr = nics_take_gpu_memory(topology);
  return type;
}

std::string node_type_key(const NodeType& type) {
  std::string key = slug(type.gpu) + "." + std::to_string(type.gpus) + "gpu";
  if (type.mnnvl)
    key += ".mnnvl";
  else if (type.nvswitch.value_or(false))
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

nlohmann::ordered_json node_type_to_json(const NodeType& t) {
  return {{"gpu", printable_field(t.gpu)},
          {"gpus", t.gpus},
          {"gpu_sm", t.gpu_sm},
          {"nvswitch", optional_to_json(t.nvswitch)},
          {"nvlinks", t.nvlinks},
          {"mnnvl", t.mnnvl},
          {"nics", optional_to_json(t.nics)},
          {"nic", printable_field(t.nic)},
          {"nic_ethernet", t.nic_ethernet},
          {"nic_rate_gbps", t.nic_rate_gbps},
          {"gpu_nic_affinity", printable_field(t.gpu_nic_affinity)},
          {"gdr", optional_to_json(t.gdr)},
          {"nccl_version", printable_field(t.nccl_version)},
          {"cuda_driver", printable_field(t.cuda_driver)}};
}

NodeType node_type_from_yaml(const YAML::Node& node, const std::string& field) {
  yaml_expect_map(node, field);
  yaml_check_keys(node, field,
                  {"key", "gpu", "gpus", "gpu_sm", "nvswitch", "nvlinks", "mnnvl", "nics", "nic",
                   "nic_ethernet", "nic_rate_gbps", "gpu_nic_affinity", "gdr", "nccl_version", "cuda_driver"});
  const auto text = [&](std::string_view key) {
    return yaml_optional_text(node[std::string(key)], yaml_child(field, key)).value_or("");
  };
  const auto number = [&](std::string_view key) {
    const YAML::Node value = node[std::string(key)];
    return value.IsDefined() ? static_cast<int>(yaml_integer(value, yaml_child(field, key), 0, 1 << 20)) : 0;
  };
  NodeType type;
  type.gpu = text("gpu");
  type.gpus = number("gpus");
  type.gpu_sm = number("gpu_sm");
  type.nvswitch = yaml_optional_bool(node["nvswitch"], yaml_child(field, "nvswitch"));
  type.nvlinks = number("nvlinks");
  type.mnnvl = yaml_optional_bool(node["mnnvl"], yaml_child(field, "mnnvl")).value_or(false);
  type.nics = yaml_optional_int(node["nics"], yaml_child(field, "nics"));
  type.nic = text("nic");
  type.nic_ethernet =
      yaml_optional_bool(node["nic_ethernet"], yaml_child(field, "nic_ethernet")).value_or(false);
  type.nic_rate_gbps = number("nic_rate_gbps");
  type.gpu_nic_affinity = text("gpu_nic_affinity");
  type.gdr = yaml_optional_bool(node["gdr"], yaml_child(field, "gdr"));
  type.nccl_version = text("nccl_version");
  type.cuda_driver = text("cuda_driver");
  return type;
}

Result<NodeType> parse_node_type(std::string_view text, std::string_view origin) {
  NodeType type;
  const Status parsed = parse_strict_yaml(
      text, origin, [&](const YAML::Node& root) { type = node_type_from_yaml(root, "node_type"); });
  if (!parsed) return Error{parsed.error()};
  return type;
}

}  // namespace nccltune
