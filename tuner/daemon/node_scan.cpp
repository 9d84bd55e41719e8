#include "daemon/node_scan.h"

#include "base/utc_time.h"

namespace nccltune {

NodeState node_state_of(const NodeTopology& topology, const CheckReport& report,
                        const LibraryVersions& versions) {
  NodeState state;
  state.host = topology.host;
  state.node_type = local_node_type(topology, versions.nccl, versions.cuda_driver);
  state.node_type_key = node_type_key(state.node_type);
  state.topology = summarize_topology(topology);
  state.gpus = gpu_states(topology);
  state.nics = nic_states(topology);
  state.checks = check_entries(report);
  state.gdr = report.gdr;
  state.degraded = topology.notes;
  state.degraded.insert(state.degraded.end(), versions.notes.begin(), versions.notes.end());
  return state;
}

ScanResult scan_node(const ScanSettings& settings, std::chrono::system_clock::time_point now) {
  const auto started = std::chrono::steady_clock::now();
  ScanResult result;
  auto topology = read_node_topology(settings.source, settings.read_options);
  if (topology) {
    result.state = node_state_of(*topology, check_node(*topology, settings.expectation), settings.versions);
    result.facts_read = true;
  } else {
    // An empty topology still has a key and verdicts, so node.yaml says plainly what is unknown.
    result.state = node_state_of(NodeTopology{}, CheckReport{}, settings.versions);
    result.state.degraded.insert(result.state.degraded.begin(), "topology unreadable: " + topology.error());
  }
  result.state.scanned_at = rfc3339_utc(now);
  result.state.scan_duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace nccltune
