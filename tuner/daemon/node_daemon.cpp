#include "daemon/node_daemon.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>
#include <tuple>

#include "base/atomic_file.h"
#include "daemon/drift.h"
#include "daemon/inspector_watch.h"
#include "daemon/metrics_textfile.h"
#include "daemon/nccl_conf_block.h"
#include "daemon/node_env.h"
#include "daemon/systemd_notify.h"
#include "fleet/fleet_output.h"
#include "node/profile_for_job.h"
#include "observe/inspector_files.h"

namespace nccltune {

namespace {

const std::string kNodeStateFile = std::filesystem::path(kDefaultNodeStateFile).filename();
constexpr const char* kEnvFile = "nccl.env";
constexpr const char* kLastGoodFile = "last-good.yaml";
constexpr const char* kMetricsFile = "nccltune.prom";

sigset_t daemon_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// Creates the file's directory when missing, then writes atomically.
Status publish_file(const std::filesystem::path& file, std::string_view content) {
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  if (error) return Error{file.parent_path().string() + ": cannot create: " + error.message()};
  return write_file_atomically(file, content);
}

// The same in every fact drift looks at, either way round (a GPU's link speed, which drops
// whenever it idles, is not one of them).
bool same_hardware(const NodeState& a, const NodeState& b) {
  return compare_with_last_good(a, b).empty() && compare_with_last_good(b, a).empty();
}

std::optional<NodeState> read_last_good(const std::filesystem::path& state_dir) {
  const std::filesystem::path file = state_dir / kLastGoodFile;
  std::error_code error;
  if (!std::filesystem::exists(file, error)) return std::nullopt;
  auto state = read_node_state(file);
  if (!state) {
    spdlog::warn("ignoring the last good state: {}; this scan becomes the new one", state.error());
    return std::nullopt;
  }
  return std::move(state.value());
}

timespec timeout_until(std::chrono::steady_clock::time_point wake) {
  const auto left =
      std::max(std::chrono::steady_clock::duration::zero(), wake - std::chrono::steady_clock::now());
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
  return {static_cast<time_t>(seconds.count()),
          static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(left - seconds).count())};
}

std::string local_host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

// When `file` was last written, seconds since the epoch (0 when it cannot be told).
double modified_unix(const std::filesystem::path& file) {
  struct stat info {};
  if (stat(file.c_str(), &info) != 0) return 0;
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) / 1e9;
}

}  // namespace

void block_daemon_signals() {
  const sigset_t set = daemon_signals();
  sigprocmask(SIG_BLOCK, &set, nullptr);
}

Result<DaemonSettings> load_daemon_settings(const DaemonOptions& options) {
  DaemonSettings settings;
  auto text = read_node_config_text(options.config_file, options.config_named);
  if (!text) return Error{text.error()};
  auto daemon = parse_daemon_config(*text, options.config_file.string());
  if (!daemon) return Error{daemon.error()};
  auto env = parse_env_config(*text, options.config_file.string());
  if (!env) return Error{env.error()};
  settings.daemon = std::move(daemon.value());
  settings.env = std::move(env.value());
  if (options.runtime_dir) settings.daemon.runtime_dir = *options.runtime_dir;
  if (options.state_dir) settings.daemon.state_dir = *options.state_dir;
  if (options.metrics_dir) settings.daemon.metrics_dir = *options.metrics_dir;
  if (options.interval) {
    auto interval = parse_interval(*options.interval);
    if (!interval) return Error{"--interval: " + interval.error()};
    settings.daemon.interval = *interval;
  }
  auto source = parse_topology_source(options.from);
  if (!source) return Error{"--from: " + source.error()};
  settings.scan.source = *source;
  settings.scan.read_options.nvml_library = settings.daemon.nvml_lib;
  if (!settings.daemon.expect.empty()) {
    auto expectation = read_expectation(settings.daemon.expect);
    if (!expectation) return Error{options.config_file.string() + ": daemon.expect: " + expectation.error()};
    settings.scan.expectation = *expectation;
  }
  return settings;  // scan.versions are read by the first scan (library_files_changed)
}

NodeDaemon::NodeDaemon(DaemonOptions options, DaemonSettings settings)
    : options_(std::move(options)),
      settings_(std::move(settings)),
      last_good_(read_last_good(settings_.daemon.state_dir)),
      watchdog_(options_.once ? std::nullopt : SystemdNotifier::watchdog_ping_interval()) {}

void NodeDaemon::ping_watchdog() {
  if (!watchdog_) return;
  SystemdNotifier::watchdog();
  next_ping_ = std::chrono::steady_clock::now() + *watchdog_;
}

int NodeDaemon::run() {
  const DaemonConfig& config = settings_.daemon;
  spdlog::info("nccltuned {}: {}, every {} s; node.yaml and nccl.env in {}, metrics in {}", NCCLTUNE_VERSION,
               options_.from.empty() ? "reading this machine" : "replaying " + options_.from,
               config.interval.count(), config.runtime_dir.string(),
               config.metrics_dir.empty() ? "(none)" : config.metrics_dir.string());
  if (options_.once) {  // signals are not blocked: Ctrl-C ends it as any command
    scan_and_publish();
    return 0;
  }
  const sigset_t signals = daemon_signals();
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    spdlog::error("signalfd: {}", std::strerror(errno));
    return 1;
  }
  scan_and_publish();
  SystemdNotifier::ready(status_);
  using Clock = std::chrono::steady_clock;
  auto next_scan = Clock::now() + settings_.daemon.interval;
  for (;;) {
    const auto next_ping = watchdog_ ? next_ping_ : Clock::time_point::max();
    const timespec timeout = timeout_until(std::min(next_scan, next_ping));
    pollfd poll_fd{signal_fd, POLLIN, 0};
    const int ready = ppoll(&poll_fd, 1, &timeout, nullptr);
    if (ready < 0 && errno != EINTR) {
      spdlog::error("ppoll: {}", std::strerror(errno));
      close(signal_fd);
      return 1;
    }
    if (ready > 0) {
      signalfd_siginfo info{};
      if (read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (info.ssi_signo == SIGHUP) {
          reload();
          next_scan = Clock::now() + settings_.daemon.interval;
        } else {
          spdlog::info("{}: stopping", strsignal(static_cast<int>(info.ssi_signo)));
          SystemdNotifier::stopping();
          close(signal_fd);
          return 0;
        }
      }
    }
    if (watchdog_ && Clock::now() >= next_ping_) ping_watchdog();
    if (Clock::now() >= next_scan) {
      scan_and_publish();
      SystemdNotifier::status(status_);
      next_scan = Clock::now() + settings_.daemon.interval;
    }
  }
}

void NodeDaemon::reload() {
  SystemdNotifier::reloading();
  auto loaded = load_daemon_settings(options_);
  config_error_ = !loaded;
  if (loaded) {
    settings_ = std::move(loaded.value());
    last_good_ = read_last_good(settings_.daemon.state_dir);
    spdlog::info("configuration reloaded from {}", options_.config_file.string());
  } else {
    spdlog::error("reload: {}; keeping the previous configuration", loaded.error());
  }
  scan_and_publish();
  SystemdNotifier::ready(status_);
}

void NodeDaemon::scan_and_publish() {
  // Around each scan: a live read that is slow (nvidia-smi waits up to its timeout) must not
  // starve the watchdog, nor may a reload's scan.
  ping_watchdog();
  // A package upgrade replaces the library file: read the versions again, so the node type key
  // and nccl.env follow it. Unchanged files cost one stat() each.
  if (library_files_changed(settings_.scan.versions))
    settings_.scan.versions = read_library_versions({settings_.daemon.nccl_lib, settings_.daemon.cuda_lib});
  ScanResult scan = scan_node(settings_.scan, std::chrono::system_clock::now());
  track_drift(scan.state, scan.facts_read);
  publish_env(scan.state.node_type_key);
  publish(scan.state);
  ping_watchdog();
  const NodeState& s = scan.state;
  status_ = fmt::format("{} GPUs, {} NICs: {} pass, {} warn, {} fail; {} drift{}", s.topology.gpus,
                        s.topology.nics, s.count(Verdict::pass), s.count(Verdict::warn),
                        s.count(Verdict::fail), s.drift.size(), s.degraded.empty() ? "" : "; degraded facts");
  if (config_error_) status_ += "; config error, see the journal";
  spdlog::debug("scan: {} in {:.3f} s", status_, s.scan_duration_s);
}

void NodeDaemon::track_drift(NodeState& state, bool facts_read) {
  // Nothing is known (node.yaml's degraded says why), so nothing is compared, and drift already
  // reported is neither repeated nor cleared: node.yaml and the metrics keep showing it.
  if (!facts_read) {
    add_drift(state, reported_drift_);
    return;
  }
  if (!last_good_) {
    last_good_ = state;
    report_output("last good state",
                  publish_file(settings_.daemon.state_dir / kLastGoodFile, render_node_state(state)).error());
    return;
  }
  accept_new_versions(state);
  std::vector<DriftEntry> drift = compare_with_last_good(*last_good_, state);
  for (const DriftEntry& d : drift)
    if (std::find(reported_drift_.begin(), reported_drift_.end(), d) == reported_drift_.end())
      spdlog::warn("drift: {} ({})", d.message, d.kind);
  for (const DriftEntry& d : reported_drift_)
    if (std::find(drift.begin(), drift.end(), d) == drift.end()) spdlog::info("drift cleared: {}", d.message);
  reported_drift_ = drift;
  add_drift(state, drift);
  // A scan without drift is the new normal (an added NIC, a port back up), kept on disk only
  // when the hardware changed, so an unchanged node does not rewrite the state directory.
  if (state.drift.empty() && !same_hardware(*last_good_, state)) {
    last_good_ = state;
    report_output("last good state",
                  publish_file(settings_.daemon.state_dir / kLastGoodFile, render_node_state(state)).error());
  }
}

void NodeDaemon::add_drift(NodeState& state, const std::vector<DriftEntry>& drift) {
  for (const DriftEntry& d : drift) state.checks.push_back({"drift", d.subject, Verdict::fail, d.message});
  state.drift = drift;
}

void NodeDaemon::accept_new_versions(const NodeState& state) {
  NodeType& was = last_good_->node_type;
  const NodeType& now = state.node_type;
  bool changed = false;
  for (auto [name, old_version, new_version] :
       {std::tuple{"NCCL", &was.nccl_version, &now.nccl_version},
        std::tuple{"CUDA driver", &was.cuda_driver, &now.cuda_driver}}) {
    // Unknown now (the library could not be read) is not a change: the last good one stays.
    if (new_version->empty() || *new_version == *old_version) continue;
    spdlog::info("{} version is {}, was {}: accepted", name, *new_version,
                 old_version->empty() ? "unknown" : *old_version);
    *old_version = *new_version;
    changed = true;
  }
  if (!changed) return;
  last_good_->node_type_key = node_type_key(was);
  report_output(
      "last good state",
      publish_file(settings_.daemon.state_dir / kLastGoodFile, render_node_state(*last_good_)).error());
}

void NodeDaemon::publish(const NodeState& state) {
  report_output(
      "node state",
      publish_file(settings_.daemon.runtime_dir / kNodeStateFile, render_node_state(state)).error());
  if (settings_.daemon.metrics_dir.empty()) return;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  report_output("metrics",
                publish_file(settings_.daemon.metrics_dir / kMetricsFile,
                             render_metrics_textfile(state, active_profile_, now, observed_network_) +
                                 fleet_metrics(state) + inspector_metrics(state))
                    .error());
}

std::string NodeDaemon::fleet_metrics(const NodeState& state) {
  const std::filesystem::path& file = settings_.daemon.fleet_survey;
  if (file.empty()) return "";
  const Result<FleetSurvey> survey = read_fleet_survey(file);
  const double modified = modified_unix(file);
  report_output("fleet survey", survey ? "" : survey.error());
  // The node the daemon speaks for: the snapshot's host with --from, else this machine's.
  const std::string host = state.host.empty() ? local_host_name() : state.host;
  return render_fleet_metrics(survey ? &survey.value() : nullptr, fleet_node_names(host), modified);
}

std::string NodeDaemon::inspector_metrics(const NodeState& state) {
  const DaemonConfig& config = settings_.daemon;
  if (config.inspector_dir.empty()) return "";
  std::error_code error;
  if (!std::filesystem::is_directory(config.inspector_dir, error)) {
    report_output("inspector", config.inspector_dir.string() + ": no such directory");
    return render_inspector_metrics({});
  }
  // Inspector never removes its files: one not rewritten for two intervals (Inspector rewrites
  // every 30 s at least) is an ended job's.
  const auto max_age = 2 * std::max(config.interval, std::chrono::seconds(30));
  const auto now = std::filesystem::file_time_type::clock::now();
  std::vector<std::filesystem::path> fresh;
  for (const auto& file : find_inspector_files({config.inspector_dir.string()}).prom_files) {
    const auto modified = std::filesystem::last_write_time(file, error);
    if (!error && now - modified <= max_age) fresh.push_back(file);
  }
  ObserveAccumulator accumulator;
  read_inspector_prom_files(fresh, accumulator);
  const ObservedJob job = accumulator.finish();
  const std::vector<std::string>& problems = accumulator.problems();
  report_output("inspector", problems.empty() ? ""
                                              : problems.front() +
                                                    (problems.size() > 1
                                                         ? fmt::format(" (and {} more)", problems.size() - 1)
                                                         : std::string()));
  // The profile of the job the files show, as `nccltune observe --profiles` finds it.
  std::optional<ProfileForJob> found;
  if (const auto [nodes, ranks] = observed_world(job); nodes > 0) {
    auto loaded =
        find_profile_for_job(settings_.env.store, state.node_type_key, JobShape{nodes, ranks / nodes},
                             settings_.env.prefer_below, ::geteuid());
    report_output("inspector profile", loaded ? "" : loaded.error());
    if (loaded) found = std::move(*loaded);
  }
  const Profile* profile = found ? found->profile() : nullptr;
  InspectorWatch watch;
  watch.files = fresh.size();
  watch.problems = problems.size();
  watch.profile = profile != nullptr;
  watch.rows = watched_rows(
      build_observe_report(job, {config.inspector_dir.string()}, profile, "", kDefaultObserveTolerance));
  for (const DriftEntry& entry :
       observed_drift_.update(watch.rows, config.inspector_drift_ratio, config.inspector_drift_intervals))
    spdlog::warn("drift: {}", entry.message);
  return render_inspector_metrics(watch);
}

void NodeDaemon::publish_env(const std::string& node_type_key) {
  const std::filesystem::path env_file = settings_.daemon.runtime_dir / kEnvFile;
  auto env = resolve_node_env(settings_.env, node_type_key);
  if (!env) {
    // Keep what an earlier scan wrote (the store may be back next time); never leave consumers
    // of EnvironmentFile= without a file.
    report_output("profile", env.error());
    std::error_code error;
    if (!std::filesystem::exists(env_file, error))
      report_output(
          "environment file",
          publish_file(env_file, "# nccltuned: the profile store could not be read; see the journal\n")
              .error());
    return;
  }
  report_output("profile", "");
  active_profile_ = env->profile;
  observed_network_ = env->observed;
  if (env->environment_file != published_env_) {
    spdlog::info("environment: {}",
                 env->profile ? env->profile->file.string() : "no profile for " + node_type_key);
    for (const std::string& warning : env->warnings) spdlog::warn("profile: {}", warning);
  }
  const std::string error = publish_file(env_file, env->environment_file).error();
  report_output("environment file", error);
  if (error.empty()) published_env_ = env->environment_file;
  if (!settings_.daemon.manage_nccl_conf) return;

  const std::filesystem::path& conf = settings_.daemon.nccl_conf;
  std::string existing;
  std::error_code missing;
  const auto type = std::filesystem::symlink_status(conf, missing).type();
  if (type == std::filesystem::file_type::symlink)  // before reading through it
    return report_output("nccl.conf", nccl_conf_symlink_refused(conf));
  if (type != std::filesystem::file_type::not_found) {
    auto text = read_text_file(conf, kMaxConfigBytes);
    if (!text) return report_output("nccl.conf", text.error());
    existing = std::move(text.value());
  }
  auto updated = update_nccl_conf_block(existing, env->nccl_conf_body, conf.string());
  if (!updated) return report_output("nccl.conf", updated.error());
  report_output("nccl.conf", *updated == existing ? "" : write_nccl_conf(conf, *updated).error());
}

void NodeDaemon::report_output(const std::string& output, const std::string& error) {
  const auto known = output_errors_.find(output);
  if (error.empty()) {
    if (known != output_errors_.end()) {
      spdlog::info("{}: working again", output);
      output_errors_.erase(known);
    }
    return;
  }
  if (known != output_errors_.end() && known->second == error) return;
  spdlog::warn("{}: {}", output, error);
  output_errors_[output] = error;
}

}  // namespace nccltune
