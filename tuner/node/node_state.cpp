#include "node/node_state.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "base/atomic_file.h"
#include "base/json_optional.h"
#include "base/printable_text.h"
#include "base/strict_yaml.h"
#include "topology/roce.h"

namespace nccltune {

namespace {

using nlohmann::ordered_json;

ordered_json optional_text(const std::optional<std::string>& value) {
  return value ? ordered_json(printable_field(*value)) : ordered_json(nullptr);
}

ordered_json pcie_json(const PcieLink& link) {
  return {{"gen", optional_to_json(link.gen)},
          {"width", optional_to_json(link.width)},
          {"max_gen", optional_to_json(link.max_gen)},
          {"max_width", optional_to_json(link.max_width)}};
}

ordered_json device_json(const DeviceState& device, bool nic) {
  ordered_json out = {{"id", device.id},
                      {"name", optional_text(device.name)},
                      {"pci", optional_text(device.pci)},
                      {"pcie", pcie_json(device.pcie)}};
  if (nic) {
    out["port_state"] = optional_text(device.port_state);
    out["rate_gbps"] = optional_to_json(device.rate_gbps);
    out["roce_mtu"] = optional_to_json(device.roce_mtu);
    out["roce_gid_index"] = optional_to_json(device.roce_gid_index);
  }
  return out;
}

// Block YAML, every string double-quoted (a host named "null" stays a string). Unlike
// json_to_yaml, doubles get 9 significant digits: a duration reads 0.031, not 0.0309999999.
void emit(YAML::Emitter& out, const ordered_json& value) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, item] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      emit(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    if (value.empty()) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const auto& item : value) emit(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    out << YAML::DoubleQuoted << value.get<std::string>();
  } else if (value.is_boolean()) {
    out << value.get<bool>();
  } else if (value.is_number_integer()) {
    out << value.get<std::int64_t>();
  } else if (value.is_number()) {
    out << value.get<double>();
  } else {
    out << YAML::Null;
  }
}

ordered_json node_type_json(const NodeState& state) {
  ordered_json out = {{"key", state.node_type_key}};
  out.update(node_type_to_json(state.node_type));
  return out;
}

ordered_json peak_json(const NodePeak& peak) {
  return {{"intra_node_gbps", optional_to_json(peak.intra_node.gbps)},
          {"intra_node_bottleneck", optional_text(peak.intra_node.bottleneck)},
          {"inter_node_gbps", optional_to_json(peak.inter_node.gbps)},
          {"inter_node_bottleneck", optional_text(peak.inter_node.bottleneck)},
          {"nvlink_domain_gpus", optional_to_json(peak.nvlink_domain_gpus)}};
}

// ---- reading ----------------------------------------------------------------------------------

std::optional<double> optional_rate_field(const YAML::Node& node, const std::string& field) {
  if (yaml_is_null(node)) return std::nullopt;
  const double value = yaml_number(node, field);
  if (value < 0) yaml_fail(yaml_line(node), field, "must not be negative");
  return value;
}

NodePeak read_peak(const YAML::Node& node, const std::string& field) {
  yaml_expect_map(node, field);
  yaml_check_keys(node, field,
                  {"intra_node_gbps", "intra_node_bottleneck", "inter_node_gbps", "inter_node_bottleneck",
                   "nvlink_domain_gpus"});
  NodePeak peak;
  peak.intra_node.gbps = optional_rate_field(node["intra_node_gbps"], field + ".intra_node_gbps");
  peak.intra_node.bottleneck =
      yaml_optional_text(node["intra_node_bottleneck"], field + ".intra_node_bottleneck");
  peak.inter_node.gbps = optional_rate_field(node["inter_node_gbps"], field + ".inter_node_gbps");
  peak.inter_node.bottleneck =
      yaml_optional_text(node["inter_node_bottleneck"], field + ".inter_node_bottleneck");
  peak.nvlink_domain_gpus = yaml_optional_int(node["nvlink_domain_gpus"], field + ".nvlink_domain_gpus");
  return peak;
}

int count_field(const YAML::Node& node, const std::string& field) {
  if (!node.IsDefined()) yaml_fail(0, field, "is missing");
  return static_cast<int>(yaml_integer(node, field, 0, std::numeric_limits<int>::max()));
}

std::string required_text(const YAML::Node& map, std::string_view key, const std::string& field) {
  const YAML::Node node = map[std::string(key)];
  if (!node.IsDefined()) yaml_fail(yaml_line(map), yaml_child(field, key), "is missing");
  return yaml_text(node, yaml_child(field, key));
}

std::string validated_key(const YAML::Node& node_type, const std::string& field) {
  const std::string key = required_text(node_type, "key", field);
  if (!is_valid_node_type_key(key))
    yaml_fail(yaml_line(node_type["key"]), yaml_child(field, "key"),
              "'" + printable_excerpt(key, 40) + "' is not a node type key ([A-Za-z0-9._-]+)");
  return key;
}

PcieLink read_pcie(const YAML::Node& node, const std::string& field) {
  PcieLink link;
  if (yaml_is_null(node)) return link;
  yaml_check_keys(node, field, {"gen", "width", "max_gen", "max_width"});
  link.gen = yaml_optional_int(node["gen"], field + ".gen");
  link.width = yaml_optional_int(node["width"], field + ".width");
  link.max_gen = yaml_optional_int(node["max_gen"], field + ".max_gen");
  link.max_width = yaml_optional_int(node["max_width"], field + ".max_width");
  return link;
}

std::vector<DeviceState> read_devices(const YAML::Node& list, const std::string& field, bool nic) {
  std::vector<DeviceState> devices;
  if (yaml_is_null(list)) return devices;
  yaml_expect_list(list, field);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = field + "[" + std::to_string(i) + "]";
    const YAML::Node node = list[i];
    if (nic)
      yaml_check_keys(node, item,
                      {"id", "name", "pci", "pcie", "port_state", "rate_gbps", "roce_mtu", "roce_gid_index"});
    else
      yaml_check_keys(node, item, {"id", "name", "pci", "pcie"});
    DeviceState device;
    device.id = required_text(node, "id", item);
    device.name = yaml_optional_text(node["name"], item + ".name");
    device.pci = yaml_optional_text(node["pci"], item + ".pci");
    device.pcie = read_pcie(node["pcie"], item + ".pcie");
    if (nic) {
      device.port_state = yaml_optional_text(node["port_state"], item + ".port_state");
      if (!yaml_is_null(node["rate_gbps"]))
        device.rate_gbps = yaml_number(node["rate_gbps"], item + ".rate_gbps");
      device.roce_mtu = yaml_optional_int(node["roce_mtu"], item + ".roce_mtu");
      device.roce_gid_index = yaml_optional_int(node["roce_gid_index"], item + ".roce_gid_index");
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

Verdict read_level(const YAML::Node& node, const std::string& field) {
  const std::string text = yaml_text(node, field);
  for (Verdict v : {Verdict::pass, Verdict::warn, Verdict::fail})
    if (to_string(v) == text) return v;
  yaml_fail(yaml_line(node), field, "'" + printable_excerpt(text, 40) + "' is not pass, warn or fail");
}

void read_document(const YAML::Node& root, NodeState& state) {
  yaml_check_keys(root, "",
                  {"schema", "host", "scanned_at", "scan_duration_s", "node_type", "topology", "devices",
                   "verdicts", "gpudirect_rdma", "drift", "degraded"});
  const std::string schema = required_text(root, "schema", "");
  if (schema != kNodeStateSchema)
    yaml_fail(yaml_line(root["schema"]), "schema",
              "'" + printable_excerpt(schema, 40) + "' is not " + std::string(kNodeStateSchema));
  state.host = required_text(root, "host", "");
  state.scanned_at = required_text(root, "scanned_at", "");
  if (root["scan_duration_s"].IsDefined())
    state.scan_duration_s = yaml_number(root["scan_duration_s"], "scan_duration_s");

  const YAML::Node type = root["node_type"];
  if (!type.IsDefined()) yaml_fail(yaml_line(root), "node_type", "is missing");
  state.node_type_key = validated_key(type, "node_type");
  state.node_type = node_type_from_yaml(type, "node_type");

  if (const YAML::Node summary = root["topology"]; summary.IsDefined()) {
    yaml_check_keys(summary, "topology", {"gpus", "nics", "numa_nodes", "pci_bridges", "nvswitch", "peak"});
    state.topology.gpus = count_field(summary["gpus"], "topology.gpus");
    state.topology.nics = count_field(summary["nics"], "topology.nics");
    state.topology.numa_nodes = count_field(summary["numa_nodes"], "topology.numa_nodes");
    state.topology.pci_bridges = count_field(summary["pci_bridges"], "topology.pci_bridges");
    state.topology.nvswitch = yaml_optional_bool(summary["nvswitch"], "topology.nvswitch");
    if (const YAML::Node peak = summary["peak"]; peak.IsDefined())
      state.topology.peak = read_peak(peak, "topology.peak");
  }
  if (const YAML::Node devices = root["devices"]; devices.IsDefined()) {
    yaml_check_keys(devices, "devices", {"gpus", "nics"});
    state.gpus = read_devices(devices["gpus"], "devices.gpus", false);
    state.nics = read_devices(devices["nics"], "devices.nics", true);
  }
  if (const YAML::Node verdicts = root["verdicts"]; verdicts.IsDefined()) {
    // The counts are derived from the checks; they are in the file for people and scripts.
    yaml_check_keys(verdicts, "verdicts", {"pass", "warn", "fail", "checks"});
    const YAML::Node checks = verdicts["checks"];
    if (!yaml_is_null(checks)) {
      yaml_expect_list(checks, "verdicts.checks");
      for (std::size_t i = 0; i < checks.size(); ++i) {
        const std::string item = "verdicts.checks[" + std::to_string(i) + "]";
        yaml_check_keys(checks[i], item, {"id", "subject", "level", "message"});
        CheckEntry entry;
        entry.id = required_text(checks[i], "id", item);
        entry.subject = required_text(checks[i], "subject", item);
        entry.level = read_level(checks[i]["level"], item + ".level");
        entry.message = required_text(checks[i], "message", item);
        state.checks.push_back(std::move(entry));
      }
    }
  }
  if (const YAML::Node gdr = root["gpudirect_rdma"]; !yaml_is_null(gdr)) {
    yaml_check_keys(gdr, "gpudirect_rdma", {"ready", "blocked_by"});
    if (!gdr["ready"].IsDefined()) yaml_fail(yaml_line(gdr), "gpudirect_rdma.ready", "is missing");
    GdrStatus status;
    status.ready = yaml_boolean(gdr["ready"], "gpudirect_rdma.ready");
    if (const YAML::Node blocked = gdr["blocked_by"]; !yaml_is_null(blocked)) {
      yaml_expect_list(blocked, "gpudirect_rdma.blocked_by");
      for (std::size_t i = 0; i < blocked.size(); ++i)
        status.blocked_by.push_back(
            yaml_text(blocked[i], "gpudirect_rdma.blocked_by[" + std::to_string(i) + "]"));
    }
    state.gdr = std::move(status);
  }
  if (const YAML::Node drift = root["drift"]; !yaml_is_null(drift)) {
    yaml_expect_list(drift, "drift");
    for (std::size_t i = 0; i < drift.size(); ++i) {
      const std::string item = "drift[" + std::to_string(i) + "]";
      yaml_check_keys(drift[i], item, {"kind", "subject", "message"});
      state.drift.push_back({required_text(drift[i], "kind", item), required_text(drift[i], "subject", item),
                             required_text(drift[i], "message", item)});
    }
  }
  if (const YAML::Node degraded = root["degraded"]; !yaml_is_null(degraded)) {
    yaml_expect_list(degraded, "degraded");
    for (std::size_t i = 0; i < degraded.size(); ++i)
      state.degraded.push_back(yaml_text(degraded[i], "degraded[" + std::to_string(i) + "]"));
  }
}

}  // namespace

int NodeState::count(Verdict level) const {
  return static_cast<int>(
      std::count_if(checks.begin(), checks.end(), [&](const CheckEntry& c) { return c.level == level; }));
}

std::vector<DeviceState> gpu_states(const NodeTopology& topology) {
  std::vector<DeviceState> out;
  for (const Gpu& gpu : topology.gpus)
    out.push_back({.id = gpu_id(gpu.index), .name = gpu.name, .pci = gpu.pci, .pcie = gpu.pcie});
  return out;
}

std::vector<DeviceState> nic_states(const NodeTopology& topology) {
  std::vector<DeviceState> out;
  for (const Nic& nic : topology.nics) {
    const auto gid = nccl_gid(nic);
    out.push_back({.id = nic_id(nic.index),
                   .name = nic.name,
                   .pci = nic.pci,
                   .pcie = nic.pcie,
                   .port_state = nic.state,
                   .rate_gbps = nic.rate_gbps,
                   .roce_mtu = is_roce(nic) ? nic.mtu : std::nullopt,
                   .roce_gid_index = gid ? std::optional(gid->index) : std::nullopt});
  }
  return out;
}

TopologySummary summarize_topology(const NodeTopology& topology) {
  std::set<int> numa;
  for (const Gpu& gpu : topology.gpus)
    if (gpu.numa) numa.insert(*gpu.numa);
  for (const Nic& nic : topology.nics)
    if (nic.numa) numa.insert(*nic.numa);
  TopologySummary summary;
  summary.gpus = static_cast<int>(topology.gpus.size());
  summary.nics = static_cast<int>(topology.nics.size());
  summary.numa_nodes = static_cast<int>(numa.size());
  summary.pci_bridges = static_cast<int>(topology.bridges.size());
  summary.nvswitch = topology.nvswitch;
  summary.peak = node_peak(topology);
  // node.yaml keeps no reasons: a state read back must equal the one written.
  summary.peak.intra_node.unknown_reason.reset();
  summary.peak.inter_node.unknown_reason.reset();
  return summary;
}

std::vector<CheckEntry> check_entries(const CheckReport& report) {
  std::vector<CheckEntry> out;
  for (const Finding& f : report.findings) out.push_back({f.check, f.subject, f.verdict, f.message});
  return out;
}

std::string render_node_state(const NodeState& state) {
  ordered_json doc;
  doc["schema"] = std::string(kNodeStateSchema);
  doc["host"] = printable_field(state.host);
  doc["scanned_at"] = state.scanned_at;
  // Microseconds are all a scan duration means; fewer digits keep the file readable.
  doc["scan_duration_s"] = std::round(state.scan_duration_s * 1e6) / 1e6;
  doc["node_type"] = node_type_json(state);
  doc["topology"] = {{"gpus", state.topology.gpus},
                     {"nics", state.topology.nics},
                     {"numa_nodes", state.topology.numa_nodes},
                     {"pci_bridges", state.topology.pci_bridges},
                     {"nvswitch", optional_to_json(state.topology.nvswitch)},
                     {"peak", peak_json(state.topology.peak)}};
  ordered_json gpus = ordered_json::array(), nics = ordered_json::array();
  for (const auto& gpu : state.gpus) gpus.push_back(device_json(gpu, false));
  for (const auto& nic : state.nics) nics.push_back(device_json(nic, true));
  doc["devices"] = {{"gpus", gpus}, {"nics", nics}};
  ordered_json checks = ordered_json::array();
  for (const auto& c : state.checks)
    checks.push_back({{"id", printable_field(c.id)},
                      {"subject", printable_field(c.subject)},
                      {"level", std::string(to_string(c.level))},
                      {"message", printable_field(c.message)}});
  doc["verdicts"] = {{"pass", state.count(Verdict::pass)},
                     {"warn", state.count(Verdict::warn)},
                     {"fail", state.count(Verdict::fail)},
                     {"checks", checks}};
  if (state.gdr) {
    ordered_json blocked = ordered_json::array();
    for (const auto& check : state.gdr->blocked_by) blocked.push_back(printable_field(check));
    doc["gpudirect_rdma"] = {{"ready", state.gdr->ready}, {"blocked_by", blocked}};
  } else {
    doc["gpudirect_rdma"] = nullptr;
  }
  ordered_json drift = ordered_json::array();
  for (const auto& d : state.drift)
    drift.push_back({{"kind", printable_field(d.kind)},
                     {"subject", printable_field(d.subject)},
                     {"message", printable_field(d.message)}});
  doc["drift"] = drift;
  ordered_json degraded = ordered_json::array();
  for (const auto& note : state.degraded) degraded.push_back(printable_field(note));
  doc["degraded"] = degraded;
  YAML::Emitter out;
  out.SetDoublePrecision(9);
  emit(out, doc);
  return std::string(out.c_str()) + "\n";
}

Result<NodeState> parse_node_state(std::string_view yaml_text, std::string_view origin) {
  NodeState state;
  auto parsed =
      parse_strict_yaml(yaml_text, origin, [&](const YAML::Node& root) { read_document(root, state); });
  if (!parsed) return Error{parsed.error()};
  return state;
}

Result<NodeState> read_node_state(const std::filesystem::path& node_yaml) {
  auto text = read_text_file(node_yaml, kMaxConfigBytes);
  if (!text) return Error{text.error()};
  return parse_node_state(*text, node_yaml.string());
}

Result<std::string> read_node_type_key(const std::filesystem::path& node_yaml) {
  auto text = read_text_file(node_yaml, kMaxConfigBytes);
  if (!text) return Error{text.error()};
  std::string key;
  const Status parsed = parse_strict_yaml(*text, node_yaml.string(), [&](const YAML::Node& root) {
    yaml_expect_map(root, "");
    const YAML::Node schema = root["schema"];
    if (!schema.IsDefined()) yaml_fail(yaml_line(root), "schema", "is missing");
    if (yaml_text(schema, "schema") != kNodeStateSchema)
      yaml_fail(yaml_line(schema), "schema", "is not " + std::string(kNodeStateSchema));
    const YAML::Node type = root["node_type"];
    if (!type.IsDefined()) yaml_fail(yaml_line(root), "node_type", "is missing");
    yaml_expect_map(type, "node_type");
    key = validated_key(type, "node_type");
  });
  if (!parsed) return Error{parsed.error()};
  return key;
}

}  // namespace nccltune
