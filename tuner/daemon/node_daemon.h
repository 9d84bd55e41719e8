// nccltuned's main loop: scan at start and every interval, publish node.yaml, nccl.env, the
// metrics textfile and (opt-in) /etc/nccl.conf's marked block, report drift from the last good
// state. Between scans it sleeps in ppoll on a signalfd (no CPU): SIGHUP reloads the config and
// rescans, SIGTERM/SIGINT end the loop, and the timeout is the next scan or watchdog ping.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/daemon_config.h"
#include "daemon/node_env.h"
#include "daemon/node_scan.h"
#include "daemon/observed_drift.h"
#include "node/env_config.h"
#include "node/node_paths.h"

namespace nccltune {

// The command line; each flag given wins over the config file, also after a reload.
struct DaemonOptions {
  std::filesystem::path config_file = kDefaultConfigFile;
  bool config_named = false;  // --config given: a missing file is an error, not the defaults
  std::string from;           // replay a snapshot instead of reading this machine
  std::optional<std::filesystem::path> runtime_dir, state_dir, metrics_dir;
  std::optional<std::string> interval;
  bool once = false;  // one scan, publish, exit; signals are left as they are (Ctrl-C works)
};

// What the config file and the flags say; rebuilt on every reload. scan.versions start empty:
// each scan reads the library versions when they are unknown or a library file changed.
struct DaemonSettings {
  DaemonConfig daemon;
  EnvConfig env;
  ScanSettings scan;
};

// Errors (a bad config key, an unreadable --expect file, a bad --from) are one line naming the
// file and the key; at start they refuse the start, on reload they keep the old settings.
Result<DaemonSettings> load_daemon_settings(const DaemonOptions& options);

class NodeDaemon {
 public:
  NodeDaemon(DaemonOptions options, DaemonSettings settings);

  // Runs until SIGTERM or SIGINT (or one scan with --once); the exit code. Without --once the
  // caller has blocked SIGHUP, SIGTERM and SIGINT (block_daemon_signals) before any thread could
  // start.
  int run();

 private:
  void scan_and_publish();
  void reload();
  void track_drift(NodeState& state, bool facts_read);
  // A new NCCL or CUDA driver version is intended, not drift: logged at info and written into the
  // last good state.
  void accept_new_versions(const NodeState& state);
  static void add_drift(NodeState& state, const std::vector<DriftEntry>& drift);
  // WATCHDOG=1 when the unit has a watchdog; the next ping is due half its timeout later.
  void ping_watchdog();
  void publish(const NodeState& state);
  // The fleet survey's metrics for this node (daemon.fleet_survey), "" when none is set; a file
  // that cannot be read or parsed is logged through report_output.
  std::string fleet_metrics(const NodeState& state);
  // What jobs got, from NCCL Inspector's textfiles (daemon.inspector.dir), "" when none is set;
  // logs a row's drift (observed_drift.h) and a bad line through report_output.
  std::string inspector_metrics(const NodeState& state);
  void publish_env(const std::string& node_type_key);
  // Logs a failure of `output` at warning level when it is new, and its recovery once.
  void report_output(const std::string& output, const std::string& error);

  DaemonOptions options_;
  DaemonSettings settings_;
  std::optional<NodeState> last_good_;
  std::vector<DriftEntry> reported_drift_;
  ObservedDrift observed_drift_;
  std::map<std::string, std::string> output_errors_;
  std::string published_env_;                        // nccl.env as last written, to log a change once
  std::optional<ActiveProfile> active_profile_;      // what nccl.env comes from, for the metrics
  std::optional<ObservedNetwork> observed_network_;  // NCCL's last account of the network, for the metrics
  bool config_error_ = false;  // the last reload's config was invalid (the old one is in use)
  std::string status_;
  std::optional<std::chrono::microseconds> watchdog_;  // ping interval; nullopt: no watchdog
  std::chrono::steady_clock::time_point next_ping_;
};

// Blocks the signals the daemon reads from its signalfd, so none is delivered asynchronously
// (not with --once: a single scan from a shell ends on Ctrl-C).
void block_daemon_signals();

}  // namespace nccltune
