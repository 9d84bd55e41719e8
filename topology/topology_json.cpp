#include "topology/topology_json.h"

#include <yaml-cpp/yaml.h>

#include "base/json_optional.h"
#include "topology/affinity.h"
#include "topology/peak_model.h"

namespace nccltune {

using nlohmann::ordered_json;

namespace {

ordered_json pcie_json(const PcieLink& link) {
  if (!link.known()) return nullptr;
  return {{"gen", optional_to_json(link.gen)},
          {"width", optional_to_json(link.width)},
          {"max_gen", optional_to_json(link.max_gen)},
          {"max_width", optional_to_json(link.max_width)}};
}

ordered_json sources_json(const Provenance& sources) {
  ordered_json out = ordered_json::object();
  for (const auto& [field, source] : sources) out[field] = std::string(to_string(source));
  return out;
}

ordered_json condition_json(FabricCondition condition) {
  if (condition == FabricCondition::present) return true;
  if (condition == FabricCondition::absent) return false;
  return nullptr;  // not supported, or a value nvml.h does not define
}

ordered_json fabric_json(const std::optional<GpuFabric>& fabric) {
  if (!fabric) return nullptr;
  ordered_json health = nullptr;
  if (fabric->health_mask || fabric->summary) {
    const FabricHealth decoded = decode_fabric_health(fabric->health_mask.value_or(0));
    health = {{"degraded_bandwidth", condition_json(decoded.degraded_bandwidth)},
              {"route_recovery", condition_json(decoded.route_recovery)},
              {"route_unhealthy", condition_json(decoded.route_unhealthy)},
              {"access_timeout_recovery", condition_json(decoded.access_timeout_recovery)},
              {"incorrect_configuration",
               decoded.incorrect_configuration == 0
                   ? ordered_json(nullptr)
                   : ordered_json(incorrect_configuration_name(decoded.incorrect_configuration))},
              {"summary", fabric->summary ? ordered_json(std::string(to_string(*fabric->summary)))
                                          : ordered_json(nullptr)}};
  }
  return {{"cluster_uuid", optional_to_json(fabric->cluster_uuid)},
          {"clique_id", optional_to_json(fabric->clique_id)},
          {"state", std::string(to_string(fabric->state))},
          {"status", optional_to_json(fabric->status)},
          {"health_mask", fabric->health_mask ? ordered_json(health_mask_text(*fabric->health_mask))
                                              : ordered_json(nullptr)},
          {"health", health},
          {"mnnvl", fabric->in_multi_node_domain()}};
}

}  // namespace

ordered_json topology_to_json(const NodeTopology& topology) {
  ordered_json doc;
  doc["schema"] = "nccltune/topology/v1";
  doc["host"] = topology.host;
  ordered_json gpus = ordered_json::array();
  for (const auto& gpu : topology.gpus) {
    gpus.push_back({{"index", gpu.index},
                    {"name", optional_to_json(gpu.name)},
                    {"pci", optional_to_json(gpu.pci)},
                    {"numa", optional_to_json(gpu.numa)},
                    {"cpu_affinity", optional_to_json(gpu.cpu_affinity)},
                    {"nvlinks", optional_to_json(gpu.nvlinks)},
                    {"sm", optional_to_json(gpu.sm)},
                    {"c2c", optional_to_json(gpu.c2c)},
                    {"memory_bytes", optional_to_json(gpu.memory_bytes)},
                    {"bar1_bytes", optional_to_json(gpu.bar1_bytes)},
                    {"pcie", pcie_json(gpu.pcie)},
                    {"fabric", fabric_json(gpu.fabric)},
                    {"sources", sources_json(gpu.sources)}});
  }
  doc["gpus"] = gpus;
  ordered_json nics = ordered_json::array();
  for (const auto& nic : topology.nics) {
    nics.push_back({{"index", nic.index},
                    {"name", optional_to_json(nic.name)},
                    {"pci", optional_to_json(nic.pci)},
                    {"numa", optional_to_json(nic.numa)},
                    {"link_layer", optional_to_json(nic.link_layer)},
                    {"state", optional_to_json(nic.state)},
                    {"rate_gbps", optional_to_json(nic.rate_gbps)},
                    {"port", optional_to_json(nic.port)},
                    {"netdev", optional_to_json(nic.netdev)},
                    {"pcie", pcie_json(nic.pcie)},
                    {"sources", sources_json(nic.sources)}});
  }
  doc["nics"] = nics;
  ordered_json links = ordered_json::array();
  for (const auto& link : topology.links)
    links.push_back({{"a", link.a},
                     {"b", link.b},
                     {"type", to_string(link.type)},
                     {"source", std::string(to_string(link.source))}});
  doc["links"] = links;
  doc["nvswitch"] = optional_to_json(topology.nvswitch);
  ordered_json nearest = ordered_json::object();
  for (const auto& [gpu, nic] : nearest_nic_map(assign_nearest_nics(topology))) nearest[gpu] = nic;
  doc["nearest_nic"] = nearest;
  NodePeak peak = node_peak(topology);
  doc["peak"] = {{"intra_node_gbps", optional_to_json(peak.intra_node.gbps)},
                 {"intra_node_bottleneck", optional_to_json(peak.intra_node.bottleneck)},
                 {"inter_node_gbps", optional_to_json(peak.inter_node.gbps)},
                 {"inter_node_bottleneck", optional_to_json(peak.inter_node.bottleneck)}};
  ordered_json bridges = ordered_json::array();
  for (const auto& bridge : topology.bridges)
    bridges.push_back({{"pci", bridge.pci},
                       {"pcie", pcie_json(bridge.pcie)},
                       {"acs_redirect", optional_to_json(bridge.acs_redirect)},
                       {"below", bridge.below}});
  doc["bridges"] = bridges;
  ordered_json interfaces = ordered_json::array();
  for (const auto& net : topology.interfaces)
    interfaces.push_back({{"name", net.name},
                          {"pci", optional_to_json(net.pci)},
                          {"operstate", optional_to_json(net.operstate)},
                          {"rdma", net.rdma}});
  doc["interfaces"] = interfaces;
  doc["driver_version"] = optional_to_json(topology.driver_version);
  ordered_json sources = ordered_json::array();
  for (auto source : topology.sources_used) sources.push_back(std::string(to_string(source)));
  doc["sources"] = sources;
  doc["notes"] = topology.notes;
  return doc;
}

namespace {

void emit(YAML::Emitter& out, const ordered_json& value) {
  switch (value.type()) {
    case ordered_json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case ordered_json::value_t::array: {
      const bool scalars =
          std::all_of(value.begin(), value.end(), [](const ordered_json& v) { return v.is_primitive(); });
      if (scalars) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : value) emit(out, item);
      out << YAML::EndSeq;
      return;
    }
    case ordered_json::value_t::string: out << YAML::DoubleQuoted << value.get<std::string>(); return;
    case ordered_json::value_t::boolean: out << value.get<bool>(); return;
    case ordered_json::value_t::number_integer: out << value.get<int64_t>(); return;
    case ordered_json::value_t::number_unsigned: out << value.get<uint64_t>(); return;
    case ordered_json::value_t::number_float: out << value.get<double>(); return;
    default: out << YAML::Null; return;
  }
}

}  // namespace

std::string json_to_yaml(const ordered_json& document) {
  YAML::Emitter out;
  emit(out, document);
  return std::string(out.c_str()) + "\n";
}

}  // namespace nccltune
