// NodeState: what nccltuned knows about this node after a scan, written to
// /run/nccltune/node.yaml (schema nccltune/node/v1) for `nccltune env`, ops and the next scan.
// One data model: the daemon renders it, readers parse it back strictly; the same file in the
// daemon's state directory is the "last good" state that drift is measured against.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "node/node_type.h"
#include "profile/profile.h"  // is_valid_node_type_key
#include "topology/checks.h"
#include "topology/node_topology.h"
#include "topology/peak_model.h"

namespace nccltune {

inline constexpr std::string_view kNodeStateSchema = "nccltune/node/v1";

// The facts of one GPU or NIC that drift is measured on. GPUs are matched by PCI address (their
// indices shift when one falls off the bus), NICs by verbs name. Every member has a default, so a
// designated initializer names only what a device has.
struct DeviceState {
  std::string id{};  // "GPU0", "NIC3"
  std::optional<std::string> name{}, pci{};
  PcieLink pcie{};
  std::optional<std::string> port_state{};  // NICs: "ACTIVE", "DOWN", ...
  std::optional<double> rate_gbps{};        // NICs
  std::optional<int> roce_mtu{};            // RoCE NICs: the netdev's MTU
  std::optional<int> roce_gid_index{};      // RoCE NICs: the GID index NCCL should use (roce.h)
  friend bool operator==(const DeviceState&, const DeviceState&) = default;
};

struct TopologySummary {
  int gpus = 0, nics = 0, numa_nodes = 0, pci_bridges = 0;
  std::optional<bool> nvswitch;
  // The node's hardware peak (topology/peak_model.h); node.yaml keeps the rates and bottlenecks
  // (`peak:` as in topo's JSON, plus nvlink_domain_gpus), not the reasons a rate is unknown.
  NodePeak peak;
  friend bool operator==(const TopologySummary&, const TopologySummary&) = default;
};

struct CheckEntry {
  std::string id;       // Finding::check, "pcie_link", "nic_port", ...
  std::string subject;  // "GPU2", "NIC5", "node"
  Verdict level = Verdict::pass;
  std::string message;
  friend bool operator==(const CheckEntry&, const CheckEntry&) = default;
};

// One difference from the last good state (see drift.h for the kinds).
struct DriftEntry {
  std::string kind;     // "gpu_missing", "nic_missing", "port_not_active", "link_narrower", ...
  std::string subject;  // "GPU3 0000:9a:00.0", "NIC2 mlx5_2", "node"
  std::string message;
  friend bool operator==(const DriftEntry&, const DriftEntry&) = default;
};

struct NodeState {
  std::string host;
  std::string scanned_at;  // RFC 3339 UTC, "2026-11-29T12:00:00Z"
  double scan_duration_s = 0;
  std::string node_type_key;
  NodeType node_type;
  TopologySummary topology;
  std::vector<DeviceState> gpus, nics;
  std::vector<CheckEntry> checks;
  std::optional<GdrStatus> gdr;  // GPUDirect RDMA as the checks judged it (CheckReport::gdr)
  std::vector<DriftEntry> drift;
  std::vector<std::string> degraded;  // sources that failed or were absent, one line each

  int count(Verdict level) const;
  friend bool operator==(const NodeState&, const NodeState&) = default;
};

// The devices and summary of a topology, as NodeState holds them.
std::vector<DeviceState> gpu_states(const NodeTopology& topology);
std::vector<DeviceState> nic_states(const NodeTopology& topology);
TopologySummary summarize_topology(const NodeTopology& topology);
std::vector<CheckEntry> check_entries(const CheckReport& report);

// Deterministic YAML, strings quoted; free text is made printable so the file always parses.
std::string render_node_state(const NodeState& state);

// Strict: schema must match, unknown keys and wrong types are errors naming origin:line and the
// field; node_type.key must be [A-Za-z0-9._-]+.
Result<NodeState> parse_node_state(std::string_view yaml_text, std::string_view origin);
Result<NodeState> read_node_state(const std::filesystem::path& node_yaml);

// Only the validated node type key, for `nccltune env` (a prolog: fast, and tolerant of fields a
// newer daemon adds). Errors name the file and the field.
Result<std::string> read_node_type_key(const std::filesystem::path& node_yaml);

}  // namespace nccltune
