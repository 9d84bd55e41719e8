// The `daemon:` section of /etc/nccltune/nccltune.yaml (every key documented in
// configs/nccltune.yaml), read only by nccltuned. The `env:` section belongs to env_config.h and
// is skipped here; any other top-level key, and any unknown key inside `daemon:`, is an error
// naming file:line and the key.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"
#include "node/node_paths.h"

namespace nccltune {

struct DaemonConfig {
  std::chrono::seconds interval{300};
  // node.yaml's directory: where `nccltune env` and the plugin look for it (node_paths.h).
  std::filesystem::path runtime_dir = std::filesystem::path(kDefaultNodeStateFile).parent_path();
  std::filesystem::path state_dir = "/var/lib/nccltune";
  // Debian's prometheus-node-exporter textfile directory (RHEL and the ansible role use
  // /var/lib/node_exporter/textfile_collector); empty: no metrics.
  std::filesystem::path metrics_dir = "/var/lib/prometheus/node-exporter";
  bool manage_nccl_conf = false;
  std::filesystem::path nccl_conf = "/etc/nccl.conf";
  std::filesystem::path expect;  // `nccltune check --expect` file; empty: none
  // `nccltune fleet --out` file (shared storage) whose verdict for this node becomes metrics; empty: none
  std::filesystem::path fleet_survey;
  // NCCL Inspector's Prometheus textfile directory (a job's NCCL_INSPECTOR_DUMP_DIR with
  // NCCL_INSPECTOR_PROM_DUMP=1), read every interval (inspector_watch.h); empty: not watched.
  std::filesystem::path inspector_dir;
  // A watched row below this observed/tuned ratio for this many intervals in a row is drift.
  double inspector_drift_ratio = 0.9;
  int inspector_drift_intervals = 3;
  std::string nvml_lib = "libnvidia-ml.so.1", nccl_lib = "libnccl.so.2", cuda_lib = "libcuda.so.1";

  friend bool operator==(const DaemonConfig&, const DaemonConfig&) = default;
};

// Empty text, or text without a `daemon:` section, gives the defaults.
Result<DaemonConfig> parse_daemon_config(std::string_view yaml_text, std::string_view origin);
// The node config's text, read once for both sections (parse_daemon_config, parse_env_config):
// a missing file is "" (every default) unless it was named (`--config FILE`, $NCCLTUNE_CONFIG),
// then an error; one that is not a regular file or cannot be read is an error naming it.
Result<std::string> read_node_config_text(const std::filesystem::path& file, bool named = false);

// "90s", "5m", "1h30m" (base/duration.h): 1 second to 1 day.
Result<std::chrono::seconds> parse_interval(std::string_view text);

}  // namespace nccltune
