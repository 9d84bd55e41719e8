// nccltuned: the node daemon (systemd Type=notify). Keeps this node's facts, checks and env file
// current and reports hardware drift; see node_daemon.h for the loop, README for the unit.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/printable_text.h"
#include "daemon/daemon_logging.h"
#include "daemon/node_daemon.h"

int main(int argc, char** argv) {
  CLI::App app{
      "nccltuned: keeps this node's NCCL facts, checks and env file current, and reports hardware drift"};
  app.set_version_flag("--version", std::string("nccltuned ") + NCCLTUNE_VERSION);
  nccltune::DaemonOptions options;
  std::string config = options.config_file.string();
  std::string runtime_dir, state_dir, metrics_dir, interval;
  int verbosity = 0;
  CLI::Option* config_option =
      app.add_option("--config", config, "Node config file (daemon: and env: sections); named, it must exist")
          ->capture_default_str();
  app.add_option(
      "--from", options.from,
      "Replay a node snapshot DIR, nvidia-smi:FILE, nvidia-smi-q:FILE or hwloc:FILE instead of reading "
      "this machine");
  app.add_option("--runtime-dir", runtime_dir,
                 "Where node.yaml and nccl.env go (overrides daemon.runtime_dir)");
  app.add_option("--state-dir", state_dir, "Where the last good state is kept (overrides daemon.state_dir)");
  app.add_option("--metrics-dir", metrics_dir,
                 "node_exporter textfile directory (overrides daemon.metrics_dir)");
  app.add_option("--interval", interval, "Time between scans, e.g. 5m (overrides daemon.interval)");
  app.add_flag("--once", options.once, "Scan and publish once, then exit");
  app.add_flag("-v,--verbose", verbosity, "Debug log output");
  CLI11_PARSE(app, argc, argv);
  // Before anything could start a thread (a library loaded for its version may): the loop reads
  // these signals only from its signalfd. A --once run keeps them, so Ctrl-C ends it.
  if (!options.once) nccltune::block_daemon_signals();

  nccltune::setup_daemon_logging(verbosity);
  options.config_file = config;
  options.config_named = config_option->count() > 0;
  if (!runtime_dir.empty()) options.runtime_dir = runtime_dir;
  if (!state_dir.empty()) options.state_dir = state_dir;
  if (!metrics_dir.empty()) options.metrics_dir = metrics_dir;
  if (!interval.empty()) options.interval = interval;

  auto settings = nccltune::load_daemon_settings(options);
  if (!settings) {
    nccltune::print_error_line("nccltuned", settings.error());
    return 1;
  }
  nccltune::NodeDaemon daemon(std::move(options), std::move(settings.value()));
  return daemon.run();
}
