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

#include "daemon_config.h"
#include "env_config.h"
#include "node_scan.h"
#include "result.h"

namespace nccltune {

// The command line; each flag given wins over the config file, also after a reload.
struct DaemonOptions {
  std::filesystem::path config_file = std::string(kDefaultDaemonConfig);
  std::string from;  // replay a snapshot instead of reading this machine
  std::optional<std::filesystem::path> runtime_dir, state_dir, metrics_dir;
  std::optional<std::string> interval;
  bool once = false;  // one scan, publish, exit
};

// What the config file, the flags and the libraries say; rebuilt on every reload.
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

  // Runs until SIGTERM or SIGINT (or one scan with --once); the exit code. The caller has
  // blocked SIGHUP, SIGTERM and SIGINT (block_daemon_signals) before any thread could start.
  int run();

 private:
  void scan_and_publish();
  void reload();
  void track_drift(NodeState& state, bool facts_read);
  void publish(const NodeState& state);
  void publish_env(const std::string& node_type_key);
  // Logs a failure of `output` at warning level when it is new, and its recovery once.
  void report_output(const std::string& output, const std::string& error);

  DaemonOptions options_;
  DaemonSettings settings_;
  std::optional<NodeState> last_good_;
  std::vector<DriftEntry> reported_drift_;
  std::map<std::string, std::string> output_errors_;
  std::string published_env_;  // nccl.env as last written, to log a change once
  bool config_error_ = false;  // the last reload's config was invalid (the old one is in use)
  std::string status_;
};

// Blocks the signals the daemon reads from its signalfd, so none is delivered asynchronously.
void block_daemon_signals();

}  // namespace nccltune
