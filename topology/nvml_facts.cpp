#include "topology/nvml_facts.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "base/strict_yaml.h"
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

int whole_number(const YAML::Node& node, const std::string& field) {
  return static_cast<int>(yaml_integer(node, field, 0, 1 << 30));
}

std::uint64_t byte_count(const YAML::Node& node, const std::string& field) {
  return static_cast<std::uint64_t>(yaml_integer(node, field, 1, static_cast<long long>(kMaxGpuMemoryBytes)));
}

std::string pci_address(const YAML::Node& node, const std::string& field) {
  const std::string text = yaml_text(node, field);
  const std::optional<std::string> pci = normalize_pci_address(text);
  if (!pci) yaml_fail(yaml_line(node), field, "'" + text + "' is not a PCI address");
  return *pci;
}

NvlinkPeer read_peer(const YAML::Node& node, const std::string& field) {
  yaml_check_keys(node, field, {"pci", "kind", "links"});
  NvlinkPeer peer;
  if (const YAML::Node pci = node["pci"]) peer.pci = pci_address(pci, yaml_child(field, "pci"));
  if (const YAML::Node kind = node["kind"]) peer.kind = yaml_text(kind, yaml_child(field, "kind"));
  if (peer.kind != "gpu" && peer.kind != "nvswitch")
    yaml_fail(yaml_line(node["kind"]), yaml_child(field, "kind"), "expected gpu or nvswitch");
  if (const YAML::Node links = node["links"]) peer.links = whole_number(links, yaml_child(field, "links"));
  return peer;
}

GpuFabric read_fabric(const YAML::Node& node, const std::string& field) {
  yaml_check_keys(node, field, {"state", "status", "cluster_uuid", "clique_id", "health_mask", "summary"});
  GpuFabric fabric;
  if (!node["state"]) yaml_fail(yaml_line(node), yaml_child(field, "state"), "missing");
  const std::string state = yaml_text(node["state"], yaml_child(field, "state"));
  const auto parsed_state = fabric_state_from_string(state);
  if (!parsed_state)
    yaml_fail(yaml_line(node["state"]), yaml_child(field, "state"),
              "'" + state + "' is not not_supported, not_started, in_progress or completed");
  fabric.state = *parsed_state;
  if (const YAML::Node status = node["status"])
    fabric.status = yaml_text(status, yaml_child(field, "status"));
  if (const YAML::Node uuid = node["cluster_uuid"]) {
    const std::string text = yaml_text(uuid, yaml_child(field, "cluster_uuid"));
    fabric.cluster_uuid = normalize_uuid(text);
    if (!fabric.cluster_uuid)
      yaml_fail(yaml_line(uuid), yaml_child(field, "cluster_uuid"), "'" + text + "' is not a UUID");
  }
  if (const YAML::Node clique = node["clique_id"])
    fabric.clique_id =
        static_cast<std::uint32_t>(yaml_integer(clique, yaml_child(field, "clique_id"), 0, 0xffffffffLL));
  if (const YAML::Node mask = node["health_mask"]) {
    const std::string text = yaml_text(mask, yaml_child(field, "health_mask"));
    fabric.health_mask = parse_health_mask(text);
    if (!fabric.health_mask)
      yaml_fail(yaml_line(mask), yaml_child(field, "health_mask"),
                "'" + text + "' is not a 32-bit mask such as \"0x1aa\"");
  }
  if (const YAML::Node summary = node["summary"]) {
    const std::string text = yaml_text(summary, yaml_child(field, "summary"));
    fabric.summary = fabric_summary_from_string(text);
    if (!fabric.summary)
      yaml_fail(yaml_line(summary), yaml_child(field, "summary"),
                "'" + text + "' is not not_supported, healthy, unhealthy or limited_capacity");
  }
  return fabric;
}

NvmlGpu read_gpu(const YAML::Node& node, const std::string& field, std::size_t position) {
  yaml_check_keys(node, field,
                  {"index", "name", "pci", "sm", "cpu_affinity", "nvlink_peers", "c2c", "memory_bytes",
                   "bar1_bytes", "fabric"});
  NvmlGpu gpu;
  gpu.index =
      node["index"] ? whole_number(node["index"], yaml_child(field, "index")) : static_cast<int>(position);
  if (const YAML::Node name = node["name"]) gpu.name = yaml_text(name, yaml_child(field, "name"));
  if (!node["pci"]) yaml_fail(yaml_line(node), yaml_child(field, "pci"), "missing");
  gpu.pci = pci_address(node["pci"], yaml_child(field, "pci"));
  if (const YAML::Node sm = node["sm"]) gpu.sm = whole_number(sm, yaml_child(field, "sm"));
  if (const YAML::Node affinity = node["cpu_affinity"])
    gpu.cpu_affinity = yaml_text(affinity, yaml_child(field, "cpu_affinity"));
  // Absent in files written before NVML's memory was read: those GPUs' memory stays unknown.
  if (const YAML::Node memory = node["memory_bytes"])
    gpu.memory_bytes = byte_count(memory, yaml_child(field, "memory_bytes"));
  if (const YAML::Node bar1 = node["bar1_bytes"])
    gpu.bar1_bytes = byte_count(bar1, yaml_child(field, "bar1_bytes"));
  if (const YAML::Node c2c = node["c2c"]) {
    const std::string c2c_field = yaml_child(field, "c2c");
    yaml_check_keys(c2c, c2c_field, {"links", "bw_mbps"});
    if (!c2c["links"]) yaml_fail(yaml_line(c2c), yaml_child(c2c_field, "links"), "missing");
    gpu.c2c_links = whole_number(c2c["links"], yaml_child(c2c_field, "links"));
    if (const YAML::Node bw = c2c["bw_mbps"])
      gpu.c2c_bw_mbps = whole_number(bw, yaml_child(c2c_field, "bw_mbps"));
  }
  if (const YAML::Node fabric = node["fabric"]; fabric && !fabric.IsNull())
    gpu.fabric = read_fabric(fabric, yaml_child(field, "fabric"));
  if (const YAML::Node peers = node["nvlink_peers"]; peers && !peers.IsNull()) {
    yaml_expect_list(peers, yaml_child(field, "nvlink_peers"));
    for (std::size_t p = 0; p < peers.size(); ++p)
      gpu.nvlink_peers.push_back(read_peer(peers[p], yaml_item(yaml_child(field, "nvlink_peers"), p)));
  }
  return gpu;
}

void write_fabric(YAML::Emitter& out, const GpuFabric& fabric) {
  out << YAML::Key << "fabric" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "state" << YAML::Value << std::string(to_string(fabric.state));
  if (fabric.status) out << YAML::Key << "status" << YAML::Value << YAML::DoubleQuoted << *fabric.status;
  if (fabric.cluster_uuid)
    out << YAML::Key << "cluster_uuid" << YAML::Value << YAML::DoubleQuoted << *fabric.cluster_uuid;
  if (fabric.clique_id) out << YAML::Key << "clique_id" << YAML::Value << *fabric.clique_id;
  if (fabric.health_mask)
    out << YAML::Key << "health_mask" << YAML::Value << YAML::DoubleQuoted
        << health_mask_text(*fabric.health_mask);
  if (fabric.summary) out << YAML::Key << "summary" << YAML::Value << std::string(to_string(*fabric.summary));
  out << YAML::EndMap;
}

}  // namespace

Result<NvmlFacts> read_nvml_yaml(const std::filesystem::path& file) {
  NvmlFacts facts;
  const Status read = read_strict_yaml(file, [&](const YAML::Node& root) {
    yaml_check_keys(root, "", {"driver_version", "cuda_driver_version", "gpus"});
    if (const YAML::Node driver = root["driver_version"])
      facts.driver_version = yaml_text(driver, "driver_version");
    if (const YAML::Node cuda = root["cuda_driver_version"])
      facts.cuda_driver_version = whole_number(cuda, "cuda_driver_version");
    if (const YAML::Node gpus = root["gpus"]; gpus && !gpus.IsNull()) {
      yaml_expect_list(gpus, "gpus");
      if (gpus.size() > kMaxDevicesPerKind)
        throw YamlFieldError{yaml_line(gpus), "gpus: " + std::to_string(gpus.size()) +
                                                  " GPUs, more than the " +
                                                  std::to_string(kMaxDevicesPerKind) + " a node may have"};
      for (std::size_t i = 0; i < gpus.size(); ++i)
        facts.gpus.push_back(read_gpu(gpus[i], yaml_item("gpus", i), i));
    }
  });
  if (!read) return Error{read.error()};
  return facts;
}

std::string nvml_yaml(const NvmlFacts& facts) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (facts.driver_version)
    out << YAML::Key << "driver_version" << YAML::Value << YAML::DoubleQuoted << *facts.driver_version;
  if (facts.cuda_driver_version)
    out << YAML::Key << "cuda_driver_version" << YAML::Value << *facts.cuda_driver_version;
  out << YAML::Key << "gpus" << YAML::Value << YAML::BeginSeq;
  for (const auto& gpu : facts.gpus) {
    out << YAML::BeginMap << YAML::Key << "index" << YAML::Value << gpu.index;
    out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << gpu.name;
    out << YAML::Key << "pci" << YAML::Value << YAML::DoubleQuoted << gpu.pci;
    if (gpu.sm) out << YAML::Key << "sm" << YAML::Value << *gpu.sm;
    if (gpu.cpu_affinity)
      out << YAML::Key << "cpu_affinity" << YAML::Value << YAML::DoubleQuoted << *gpu.cpu_affinity;
    if (gpu.memory_bytes) out << YAML::Key << "memory_bytes" << YAML::Value << *gpu.memory_bytes;
    if (gpu.bar1_bytes) out << YAML::Key << "bar1_bytes" << YAML::Value << *gpu.bar1_bytes;
    if (gpu.c2c_links) {
      out << YAML::Key << "c2c" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "links"
          << YAML::Value << *gpu.c2c_links;
      if (gpu.c2c_bw_mbps) out << YAML::Key << "bw_mbps" << YAML::Value << *gpu.c2c_bw_mbps;
      out << YAML::EndMap;
    }
    if (gpu.fabric) write_fabric(out, *gpu.fabric);
    out << YAML::Key << "nvlink_peers" << YAML::Value << YAML::BeginSeq;
    for (const auto& peer : gpu.nvlink_peers) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "pci" << YAML::Value << YAML::DoubleQuoted
          << peer.pci << YAML::Key << "kind" << YAML::Value << peer.kind << YAML::Key << "links"
          << YAML::Value << peer.links << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nccltune
