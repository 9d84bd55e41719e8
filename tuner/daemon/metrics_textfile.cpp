#include "daemon/metrics_textfile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "base/collective_names.h"
#include "base/utc_time.h"
#include "daemon/drift.h"
#include "topology/roce.h"

namespace nccltune {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

class TextfileWriter {
 public:
  // HELP and TYPE once, before the metric's samples.
  void family(std::string_view name, std::string_view type, std::string_view help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::string_view name, const Labels& labels, double value) {
    text_ += name;
    if (!labels.empty()) {
      text_ += '{';
      for (std::size_t i = 0; i < labels.size(); ++i)
        text_ +=
            fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escape_label_value(labels[i].second));
      text_ += '}';
    }
    text_ += fmt::format(" {}\n", value);
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

Labels device_labels(const DeviceState& device) {
  return {{"device", device.id}, {"name", device.name.value_or("")}, {"pci", device.pci.value_or("")}};
}

// The transfer rate of a PCIe generation's lanes, transfers per second (Gen1 2.5 GT/s ... Gen6 64).
std::optional<double> pcie_transfers_per_second(std::optional<int> gen) {
  static constexpr double kGigaTransfers[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (!gen || *gen < 1 || *gen > 6) return std::nullopt;
  return kGigaTransfers[*gen] * 1e9;
}

void link_widths(TextfileWriter& out, const NodeState& state) {
  out.family("nccltune_pcie_link_width", "gauge", "PCIe link width (lanes) of a GPU or NIC, as trained now.");
  for (const auto* devices : {&state.gpus, &state.nics})
    for (const DeviceState& d : *devices)
      if (d.pcie.width) out.sample("nccltune_pcie_link_width", device_labels(d), *d.pcie.width);
  out.family("nccltune_pcie_link_max_width", "gauge", "Widest PCIe link (lanes) a GPU or NIC supports.");
  for (const auto* devices : {&state.gpus, &state.nics})
    for (const DeviceState& d : *devices)
      if (d.pcie.max_width) out.sample("nccltune_pcie_link_max_width", device_labels(d), *d.pcie.max_width);
  out.family("nccltune_pcie_link_speed_transfers_per_second", "gauge",
             "PCIe link speed of a GPU or NIC per lane, as trained now (idle GPUs train down).");
  for (const auto* devices : {&state.gpus, &state.nics})
    for (const DeviceState& d : *devices)
      if (const auto speed = pcie_transfers_per_second(d.pcie.gen))
        out.sample("nccltune_pcie_link_speed_transfers_per_second", device_labels(d), *speed);
  out.family("nccltune_pcie_link_max_speed_transfers_per_second", "gauge",
             "Fastest PCIe link speed per lane a GPU or NIC supports.");
  for (const auto* devices : {&state.gpus, &state.nics})
    for (const DeviceState& d : *devices)
      if (const auto speed = pcie_transfers_per_second(d.pcie.max_gen))
        out.sample("nccltune_pcie_link_max_speed_transfers_per_second", device_labels(d), *speed);
}

void nic_ports(TextfileWriter& out, const NodeState& state) {
  out.family("nccltune_nic_port_active", "gauge",
             "1 when the NIC's port is ACTIVE, else 0; state is the port state read.");
  for (const DeviceState& nic : state.nics) {
    if (!nic.port_state) continue;
    Labels labels = device_labels(nic);
    labels.emplace_back("state", *nic.port_state);
    out.sample("nccltune_nic_port_active", labels, *nic.port_state == "ACTIVE" ? 1 : 0);
  }
  out.family("nccltune_nic_rate_bits_per_second", "gauge", "The NIC port's rate.");
  for (const DeviceState& nic : state.nics)
    if (nic.rate_gbps)
      out.sample("nccltune_nic_rate_bits_per_second", device_labels(nic), *nic.rate_gbps * 1e9);
}

// GPUDirect RDMA and RoCE as `nccltune check` judges them, so that an alert needs no parsing of
// check subjects: readiness for the node, the GID index and MTU for each RoCE NIC.
void gpudirect_and_roce(TextfileWriter& out, const NodeState& state) {
  out.family(
      "nccltune_gdr_ready", "gauge",
      "1 when GPUDirect RDMA's prerequisites hold (nvidia_peermem or dma-buf, no IOMMU translation, no "
      "ACS redirect above a GPU), 0 when one does not (nccltune_check_status names it); absent when the "
      "node has no GPU or RDMA NIC, or too little is known.");
  if (state.gdr) out.sample("nccltune_gdr_ready", {}, state.gdr->ready ? 1 : 0);
  out.family(
      "nccltune_roce_gid_index", "gauge",
      "The GID index NCCL_IB_GID_INDEX should name for a RoCE NIC: its RoCE v2 GID with an IPv4 address.");
  for (const DeviceState& nic : state.nics)
    if (nic.roce_gid_index) out.sample("nccltune_roce_gid_index", device_labels(nic), *nic.roce_gid_index);
  out.family("nccltune_roce_mtu_bytes", "gauge", "The MTU of a RoCE NIC's netdev.");
  for (const DeviceState& nic : state.nics)
    if (nic.roce_mtu) out.sample("nccltune_roce_mtu_bytes", device_labels(nic), *nic.roce_mtu);
  out.family("nccltune_roce_mtu_ok", "gauge",
             "1 when a RoCE NIC's MTU is 4096 or more (check warns below), else 0.");
  for (const DeviceState& nic : state.nics)
    if (nic.roce_mtu)
      out.sample("nccltune_roce_mtu_ok", device_labels(nic), *nic.roce_mtu >= kRoceMinInterfaceMtu ? 1 : 0);
}

// The node's line rates, and each collective's busbw ceiling on one node and on two like it: what
// a dashboard puts a measured busbw against.
void hardware_peak(TextfileWriter& out, const NodeState& state) {
  const NodePeak& peak = state.topology.peak;
  out.family(
      "nccltune_peak_bandwidth_bytes_per_second", "gauge",
      "Line rate per GPU and direction of the bottleneck within the node and out of it (absent: unknown).");
  if (peak.intra_node.gbps)
    out.sample("nccltune_peak_bandwidth_bytes_per_second",
               {{"path", "intra_node"}, {"bottleneck", peak.intra_node.bottleneck.value_or("")}},
               *peak.intra_node.gbps * 1e9);
  if (peak.inter_node.gbps)
    out.sample("nccltune_peak_bandwidth_bytes_per_second",
               {{"path", "inter_node_per_gpu"}, {"bottleneck", peak.inter_node.bottleneck.value_or("")}},
               *peak.inter_node.gbps * 1e9);
  out.family("nccltune_peak_busbw_bytes_per_second", "gauge",
             "The busbw a collective can reach on this many nodes like this one, one rank per GPU (absent: "
             "unknown).");
  for (const CollectiveName& collective : kCollectiveTable)
    for (int nodes : {1, 2})
      if (const LineRate rate = collective_peak(peak, collective.name, nodes, state.topology.gpus); rate.gbps)
        out.sample("nccltune_peak_busbw_bytes_per_second",
                   {{"collective", std::string(collective.name)},
                    {"nodes", std::to_string(nodes)},
                    {"bottleneck", rate.bottleneck.value_or("")}},
                   *rate.gbps * 1e9);
}

// One sample per finding: 0 pass, 1 warn, 2 fail (as `nccltune check` exits), so an alert names
// the check and the device rather than a count.
void check_findings(TextfileWriter& out, const NodeState& state) {
  out.family("nccltune_check_status", "gauge",
             "The last scan's finding per check and subject: 0 pass, 1 warn, 2 fail (see node.yaml).");
  for (const CheckEntry& check : state.checks)
    out.sample("nccltune_check_status", {{"check", check.id}, {"subject", check.subject}},
               static_cast<int>(check.level));
}

void active_profile(TextfileWriter& out, const std::optional<ActiveProfile>& profile, double now_unix) {
  out.family("nccltune_profile_info", "gauge",
             "1 with the labels of the single-node profile nccl.env comes from; absent without one.");
  if (!profile) return;
  out.sample("nccltune_profile_info",
             {{"key", profile->node_type_key},
              {"nodes", std::to_string(profile->nodes)},
              {"date", profile->date},
              {"file", profile->file.string()}},
             1);
  const auto tuned = parse_rfc3339_utc(profile->date);
  if (!tuned) return;
  out.family("nccltune_profile_age_seconds", "gauge", "How long ago the active profile was tuned.");
  out.sample("nccltune_profile_age_seconds", {},
             now_unix - std::chrono::duration<double>(tuned->time_since_epoch()).count());
}

void observed_network(TextfileWriter& out, const std::optional<ObservedNetwork>& observed) {
  out.family("nccltune_nccl_observed_info", "gauge",
             "1 with the transport NCCL used in the trials of this node type's newest profile that recorded "
             "NCCL's log; absent without one.");
  if (!observed) return;
  const NcclObservation& o = observed->observation;
  out.sample("nccltune_nccl_observed_info",
             {{"transport", o.transport},
              {"net_plugin", o.net_plugin},
              {"nccl_version", o.nccl_version},
              {"date", observed->date},
              {"file", observed->file.string()}},
             1);
  out.family("nccltune_nccl_observed_hcas", "gauge", "Network devices NCCL used in those trials.");
  out.sample("nccltune_nccl_observed_hcas", {}, static_cast<double>(o.hcas.size()));
  if (!o.connections || !o.gdr_connections || *o.connections == 0) return;
  out.family("nccltune_nccl_observed_gdr_ratio", "gauge",
             "Share of those trials' network connections with GPUDirect RDMA (1: all, 0: none).");
  out.sample("nccltune_nccl_observed_gdr_ratio", {},
             static_cast<double>(*o.gdr_connections) / *o.connections);
}

// The first of `names` that the survey names, or "".
std::string survey_name(const FleetSurvey& survey, const std::vector<std::string>& names) {
  auto named = [&survey](const std::string& name) {
    auto is = [&name](const auto& entry) { return entry.node == name; };
    auto holds = [&name](const auto& entry) { return entry.nodes[0] == name || entry.nodes[1] == name; };
    return std::any_of(survey.local.begin(), survey.local.end(), is) ||
           std::any_of(survey.pairs.begin(), survey.pairs.end(), holds) ||
           std::any_of(survey.suspects.begin(), survey.suspects.end(), is) ||
           std::any_of(survey.links.begin(), survey.links.end(), holds) ||
           std::any_of(survey.failed.begin(), survey.failed.end(), is);
  };
  for (const std::string& name : names)
    if (!name.empty() && named(name)) return name;
  return "";
}

std::string fleet_status(const FleetSurvey& survey, const std::string& node) {
  if (node.empty()) return "absent";
  auto is = [&node](const auto& entry) { return entry.node == node; };
  if (std::any_of(survey.failed.begin(), survey.failed.end(), is)) return "failed";
  if (std::any_of(survey.suspects.begin(), survey.suspects.end(), is)) return "suspect";
  return "pass";
}

}  // namespace

std::vector<std::string> fleet_node_names(const std::string& host) {
  std::vector<std::string> names{host};
  const std::string short_name = host.substr(0, host.find('.'));
  if (short_name != host) names.push_back(short_name);
  return names;
}

std::string render_fleet_metrics(const FleetSurvey* survey, const std::vector<std::string>& node_names,
                                 double modified_unix) {
  TextfileWriter out;
  out.family(
      "nccltune_fleet_survey_error", "gauge",
      "1 when daemon.fleet_survey is missing, unreadable or malformed (the journal says why), else 0.");
  out.sample("nccltune_fleet_survey_error", {}, survey ? 0 : 1);
  if (!survey) return out.take();
  // A timestamp rather than an age: it stays true between scans (alert on time() - it).
  out.family("nccltune_fleet_survey_timestamp_seconds", "gauge",
             "When the fleet survey file was written (its mtime), seconds since the epoch.");
  out.sample("nccltune_fleet_survey_timestamp_seconds", {}, modified_unix);

  const std::string node = survey_name(*survey, node_names);
  out.family("nccltune_fleet_node_status", "gauge",
             "1 with this node's status in the fleet survey: failed, suspect, pass, or absent when the "
             "survey does not name it.");
  out.sample("nccltune_fleet_node_status", {{"status", fleet_status(*survey, node)}}, 1);
  if (node.empty()) return out.take();

  std::size_t links = 0;
  for (const SuspectLink& link : survey->links) links += link.nodes[0] == node || link.nodes[1] == node;
  out.family("nccltune_fleet_suspect_links", "gauge",
             "Suspect links (pairs slow only together) of the fleet survey that include this node.");
  out.sample("nccltune_fleet_suspect_links", {}, static_cast<double>(links));
  out.family("nccltune_fleet_local_busbw_bytes_per_second", "gauge",
             "This node's busbw alone in the fleet survey (absent: not measured or failed).");
  for (const LocalResult& local : survey->local)
    if (local.node == node && local.busbw_gbps)
      out.sample("nccltune_fleet_local_busbw_bytes_per_second", {}, *local.busbw_gbps * 1e9);
  out.family(
      "nccltune_fleet_pair_busbw_bytes_per_second", "gauge",
      "This node's busbw with each partner in the fleet survey's pairs (absent: not measured or failed).");
  for (const PairResult& pair : survey->pairs) {
    if (!pair.busbw_gbps || (pair.nodes[0] != node && pair.nodes[1] != node)) continue;
    const std::string& partner = pair.nodes[0] == node ? pair.nodes[1] : pair.nodes[0];
    out.sample("nccltune_fleet_pair_busbw_bytes_per_second", {{"partner", partner}}, *pair.busbw_gbps * 1e9);
  }
  return out.take();
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string render_metrics_textfile(const NodeState& state, const std::optional<ActiveProfile>& profile,
                                    double scanned_at_unix, const std::optional<ObservedNetwork>& observed) {
  TextfileWriter out;
  out.family("nccltune_node_info", "gauge",
             "Always 1; the labels name this node's type as nccltune keys profiles.");
  out.sample("nccltune_node_info",
             {{"key", state.node_type_key},
              {"nccl_version", state.node_type.nccl_version},
              {"cuda_driver", state.node_type.cuda_driver}},
             1);
  out.family("nccltune_last_scan_timestamp_seconds", "gauge",
             "When the last scan finished, seconds since the epoch.");
  out.sample("nccltune_last_scan_timestamp_seconds", {}, scanned_at_unix);
  out.family("nccltune_scan_duration_seconds", "gauge", "How long the last scan took.");
  out.sample("nccltune_scan_duration_seconds", {}, state.scan_duration_s);

  out.family("nccltune_check_verdicts", "gauge",
             "Findings of the last scan's checks (as `nccltune check`), by verdict.");
  for (Verdict v : {Verdict::pass, Verdict::warn, Verdict::fail})
    out.sample("nccltune_check_verdicts", {{"verdict", std::string(to_string(v))}}, state.count(v));

  out.family("nccltune_devices", "gauge", "Devices the last scan found, by kind.");
  out.sample("nccltune_devices", {{"kind", "gpu"}}, state.topology.gpus);
  out.sample("nccltune_devices", {{"kind", "nic"}}, state.topology.nics);
  out.sample("nccltune_devices", {{"kind", "numa_node"}}, state.topology.numa_nodes);
  out.sample("nccltune_devices", {{"kind", "pci_bridge"}}, state.topology.pci_bridges);

  check_findings(out, state);
  active_profile(out, profile, scanned_at_unix);
  observed_network(out, observed);
  link_widths(out, state);
  nic_ports(out, state);
  hardware_peak(out, state);
  gpudirect_and_roce(out, state);

  // Every kind is written, 0 when absent, so an alert on `> 0` also sees it clear.
  std::map<std::string, int> drift;
  for (const char* kind : kDriftKinds) drift[kind] = 0;
  for (const DriftEntry& d : state.drift) ++drift[d.kind];
  out.family("nccltune_drift", "gauge",
             "Differences from the last good state, by kind (see node.yaml for details).");
  for (const auto& [kind, count] : drift) out.sample("nccltune_drift", {{"kind", kind}}, count);

  out.family("nccltune_degraded", "gauge",
             "1 when a topology source or library was missing or failed, so facts are incomplete.");
  out.sample("nccltune_degraded", {}, state.degraded.empty() ? 0 : 1);
  return out.take();
}

}  // namespace nccltune
