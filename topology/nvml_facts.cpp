#include "topology/nvml_facts.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "topology/node_topology.h"

namespace nccltune {

int NvmlGpu::nvlinks_total() const {
  int total = 0;
  for (const auto& peer : nvlink_peers) total += peer.links;
  return total;
}

int NvmlGpu::nvlinks_to_switches() const {
  int total = 0;
  for (const auto& peer : nvlink_peers)
    if (peer.kind == "nvswitch") total += peer.links;
  return total;
}

int nvlinks_between(const NvmlGpu& a, const NvmlGpu& b) {
  int direct = 0;
  for (const auto& peer : a.nvlink_peers)
    if (peer.kind == "gpu" && peer.pci == b.pci) direct += peer.links;
  const int switched = std::min(a.nvlinks_to_switches(), b.nvlinks_to_switches());
  return direct + switched;
}

namespace {

// Rejects keys this reader does not know, so a typo in a hand-edited file is not silently lost.
std::optional<std::string> unknown_key(const YAML::Node& map, const std::set<std::string>& known) {
  for (const auto& item : map) {
    auto key = item.first.as<std::string>();
    if (!known.count(key)) return key;
  }
  return std::nullopt;
}

}  // namespace

Result<NvmlFacts> read_nvml_yaml(const std::filesystem::path& file) {
  const std::string where = file.string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(where);
  } catch (const YAML::Exception& e) {
    return Error{where + ": " + e.what()};
  }
  if (!root.IsMap()) return Error{where + ": expected a mapping at the top"};
  if (auto key = unknown_key(root, {"driver_version", "cuda_driver_version", "gpus"}))
    return Error{where + ": unknown key '" + *key + "'"};
  NvmlFacts facts;
  try {
    if (root["driver_version"]) facts.driver_version = root["driver_version"].as<std::string>();
    if (root["cuda_driver_version"]) facts.cuda_driver_version = root["cuda_driver_version"].as<int>();
    const auto gpus = root["gpus"];
    if (gpus && !gpus.IsSequence()) return Error{where + ": gpus: expected a list"};
    for (size_t i = 0; gpus && i < gpus.size(); ++i) {
      const auto node = gpus[i];
      const std::string field = "gpus[" + std::to_string(i) + "]";
      if (!node.IsMap()) return Error{where + ": " + field + ": expected a mapping"};
      if (auto key = unknown_key(node, {"index", "name", "pci", "sm", "cpu_affinity", "nvlink_peers", "c2c"}))
        return Error{where + ": " + field + ": unknown key '" + *key + "'"};
      NvmlGpu gpu;
      gpu.index = node["index"] ? node["index"].as<int>() : static_cast<int>(i);
      gpu.name = node["name"].as<std::string>("");
      auto pci = normalize_pci_address(node["pci"].as<std::string>(""));
      if (!pci) return Error{where + ": " + field + ".pci: not a PCI address"};
      gpu.pci = *pci;
      if (node["sm"]) gpu.sm = node["sm"].as<int>();
      if (node["cpu_affinity"]) gpu.cpu_affinity = node["cpu_affinity"].as<std::string>();
      if (const auto c2c = node["c2c"]) {
        if (!c2c.IsMap()) return Error{where + ": " + field + ".c2c: expected a mapping of links, bw_mbps"};
        if (auto key = unknown_key(c2c, {"links", "bw_mbps"}))
          return Error{where + ": " + field + ".c2c: unknown key '" + *key + "'"};
        if (!c2c["links"]) return Error{where + ": " + field + ".c2c: links is missing"};
        gpu.c2c_links = c2c["links"].as<int>();
        if (*gpu.c2c_links < 0) return Error{where + ": " + field + ".c2c.links: must be >= 0"};
        if (c2c["bw_mbps"]) gpu.c2c_bw_mbps = c2c["bw_mbps"].as<int>();
      }
      const auto peers = node["nvlink_peers"];
      for (size_t p = 0; peers && p < peers.size(); ++p) {
        const auto peer = peers[p];
        const std::string peer_field = field + ".nvlink_peers[" + std::to_string(p) + "]";
        if (auto key = unknown_key(peer, {"pci", "kind", "links"}))
          return Error{where + ": " + peer_field + ": unknown key '" + *key + "'"};
        NvlinkPeer entry;
        auto peer_pci = normalize_pci_address(peer["pci"].as<std::string>(""));
        entry.pci = peer_pci.value_or("");
        entry.kind = peer["kind"].as<std::string>("gpu");
        if (entry.kind != "gpu" && entry.kind != "nvswitch")
          return Error{where + ": " + peer_field + ".kind: expected gpu or nvswitch"};
        entry.links = peer["links"].as<int>(0);
        gpu.nvlink_peers.push_back(entry);
      }
      facts.gpus.push_back(std::move(gpu));
    }
  } catch (const YAML::Exception& e) {
    return Error{where + ": " + e.what()};
  }
  return facts;
}

std::string nvml_yaml(const NvmlFacts& facts) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (facts.driver_version) out << YAML::Key << "driver_version" << YAML::Value << YAML::DoubleQuoted << *facts.driver_version;
  if (facts.cuda_driver_version) out << YAML::Key << "cuda_driver_version" << YAML::Value << *facts.cuda_driver_version;
  out << YAML::Key << "gpus" << YAML::Value << YAML::BeginSeq;
  for (const auto& gpu : facts.gpus) {
    out << YAML::BeginMap << YAML::Key << "index" << YAML::Value << gpu.index;
    out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << gpu.name;
    out << YAML::Key << "pci" << YAML::Value << YAML::DoubleQuoted << gpu.pci;
    if (gpu.sm) out << YAML::Key << "sm" << YAML::Value << *gpu.sm;
    if (gpu.cpu_affinity) out << YAML::Key << "cpu_affinity" << YAML::Value << YAML::DoubleQuoted << *gpu.cpu_affinity;
    if (gpu.c2c_links) {
      out << YAML::Key << "c2c" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "links"
          << YAML::Value << *gpu.c2c_links;
      if (gpu.c2c_bw_mbps) out << YAML::Key << "bw_mbps" << YAML::Value << *gpu.c2c_bw_mbps;
      out << YAML::EndMap;
    }
    out << YAML::Key << "nvlink_peers" << YAML::Value << YAML::BeginSeq;
    for (const auto& peer : gpu.nvlink_peers) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "pci" << YAML::Value << YAML::DoubleQuoted << peer.pci
          << YAML::Key << "kind" << YAML::Value << peer.kind << YAML::Key << "links" << YAML::Value
          << peer.links << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nccltune
