// `nccltune env`: the environment of the profile that fits this job, for a Slurm TaskProlog or
// Prolog, a systemd EnvironmentFile, /etc/nccl.conf, a shell, JSON or the NCCL example tuner
// plugin. The job's shape comes from flags or Slurm's environment, the node type from --shape,
// the daemon's node.yaml or a quick local read; the store picks the profile by name.
//
// Fail-open: a prolog must never fail a job because of a profile store, so on any error nothing
// goes to stdout, one line goes to stderr (and syslog, from a Slurm script or with --syslog), and
// the exit status is 0; --strict makes it 2. No profile for the job is the same: nothing on
// stdout, one line saying what env tried and the flag that fixes it (env_grounds.h), 0 or 2.
//
// NCCL Inspector (node/inspector_env.h) is apart from the profile: a job that asks for it
// (NCCLTUNE_INSPECTOR=1, --inspector; or every job, env.inspector.jobs: all) gets its variables
// after the profile's, and also when no profile fits it, since what nobody tuned is what
// `nccltune observe` shows. Only an unreadable node config, or NCCLTUNE_DISABLE=1, leaves it out.
#include "env/env_command.h"

#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "base/printable_text.h"
#include "node/env_config.h"
#include "node/env_format.h"
#include "node/env_grounds.h"
#include "node/inspector_env.h"
#include "node/job_domains.h"
#include "node/job_shape.h"
#include "node/node_paths.h"
#include "node/node_state.h"
#include "node/profile_for_job.h"
#include "profile/profile.h"

namespace nccltune {

namespace {

constexpr int kStrictFailure = 2;

struct EnvOptions {
  std::string profiles, shape, format = "sh", config, node_state = kDefaultNodeStateFile, prefer;
  std::optional<std::string> nodes, gpus_per_node, domains;
  bool strict = false, syslog = false;
  bool inspector = false;  // --inspector: this job asks for NCCL Inspector
  std::string job_id;      // --job-id: the job's id for Inspector's directory; default SLURM_JOB_ID
  LocalReadOptions local;  // when neither --shape nor node.yaml names the node type
};

bool in_slurm_script() {
  return std::getenv("SLURM_SCRIPT_CONTEXT") != nullptr;
}

// Which profile was chosen, and why, on stderr when NCCLTUNE_LOG_LEVEL asks for info (as the full
// nccltune's logger prints it); a prolog's stderr stays quiet otherwise.
void note(const std::string& message) {
  const char* level = std::getenv("NCCLTUNE_LOG_LEVEL");
  if (level == nullptr) return;
  const std::string_view wanted(level);
  if (wanted != "info" && wanted != "debug" && wanted != "trace") return;
  std::fprintf(stderr, "nccltune info: %s\n", printable_excerpt(message, 2000).c_str());
}

// One line per problem on stderr, and in syslog from a Slurm prolog (whose stderr nobody reads).
class Reporter {
 public:
  explicit Reporter(bool to_syslog) : to_syslog_(to_syslog) {
    if (to_syslog_) openlog("nccltune-env", LOG_PID, LOG_USER);
  }
  ~Reporter() {
    if (to_syslog_) closelog();
  }
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  void line(const std::string& message) const {
    const std::string text = printable_excerpt(message, 2000);  // one line, whatever a file held
    print_error_line("nccltune env", text);
    if (to_syslog_) ::syslog(LOG_USER | LOG_WARNING, "%s", text.c_str());
  }

 private:
  bool to_syslog_;
};

// NCCLTUNE_DISABLE as the environment has it; nullopt when unset. Only "1" turns the profile off,
// as in the TaskProlog and the env plugin.
std::optional<std::string> disable_switch() {
  const char* off = std::getenv("NCCLTUNE_DISABLE");
  return off == nullptr ? std::nullopt : std::optional<std::string>(off);
}

// The job's own values of the names the profile sets: those are left as the job has them.
JobOwnEnv job_own_env(const Profile& profile) {
  JobOwnEnv own;
  for (const auto& [name, value] : profile.env)
    if (const char* set = std::getenv(name.c_str())) own.emplace(name, set);
  return own;
}

std::map<std::string, std::string> slurm_environment() {
  std::map<std::string, std::string> environment;
  for (const char* name : kJobShapeVariables)
    if (const char* value = std::getenv(name)) environment.emplace(name, value);
  return environment;
}

NodeTypeAttempt node_type_attempt(const EnvOptions& options) {
  std::error_code error;
  return {options.shape, options.node_state, std::filesystem::exists(options.node_state, error),
          options.local.from};
}

Result<std::string> node_type_key_for(const EnvOptions& options, const NodeTypeAttempt& attempt) {
  if (!options.shape.empty()) {
    if (!is_valid_node_type_key(options.shape))
      return Error{"--shape: '" + printable_excerpt(options.shape, 80) +
                   "' is not a name from [A-Za-z0-9._-]"};
    return options.shape;
  }
  if (attempt.node_state_present) return read_node_type_key(options.node_state);
  Result<std::string> key = local_node_type_key(options.local);
  if (!key) return Error{cannot_work_out_node_type(attempt, key.error())};
  return key;
}

// A few of the node types the store holds profiles for, to name in the line that says why
// nothing was served.
std::vector<std::string> store_keys(const std::filesystem::path& store) {
  constexpr std::size_t kNamed = 5;
  std::vector<std::string> keys;
  std::error_code error;
  for (std::filesystem::directory_iterator it(store, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (is_valid_node_type_key(name) && it->is_directory(error) && !stored_profile_names(it->path()).empty())
      keys.push_back(name);
  }
  std::sort(keys.begin(), keys.end());
  if (keys.size() > kNamed) {
    const std::size_t more = keys.size() - kNamed;
    keys.resize(kNamed);
    keys.push_back(std::to_string(more) + " more");
  }
  return keys;
}

// What this job gets (the profile of its node count, or the serving rule's from the counts around
// it); when the store has none that fits, the one line that says why.
struct JobProfile {
  std::optional<ProfileForJob> found;
  std::string nothing_why;
  JobDomains domains;  // an MNNVL job's NVLink domains and how they were known
};

Result<JobProfile> job_profile(const EnvOptions& options, const EnvConfig& config, const Reporter& reporter) {
  const Result<JobShape> by_host = job_shape({options.nodes, options.gpus_per_node}, slurm_environment());
  if (!by_host) return Error{by_host.error()};
  const NodeTypeAttempt attempt = node_type_attempt(options);
  const Result<std::string> key = node_type_key_for(options, attempt);
  if (!key) return Error{key.error()};
  const std::filesystem::path store =
      options.profiles.empty() ? config.store : std::filesystem::path(options.profiles);
  // On an MNNVL node type NCCL counts NVLink domains, not hosts: the profile is stored by them.
  const Result<JobDomains> domains = job_domains(*by_host, *key, options.domains, "--domains", store / *key);
  if (!domains) return Error{domains.error()};
  const JobShape* job = &domains->job;
  const bool prefer_below = options.prefer.empty() ? config.prefer_below : options.prefer == "below";

  Result<ProfileForJob> found =
      find_profile_for_job(store, *key, *job, prefer_below, ::geteuid(), ProfileParts::for_jobs);
  if (!found) return Error{found.error()};
  NothingServed nothing{attempt, *key, store.string(), *job, {}, {}, std::nullopt, 0};
  if (!found->stored) {
    nothing.stored_counts = stored_node_counts(store / *key);
    if (nothing.stored_counts.empty()) nothing.store_keys = store_keys(store);
    return JobProfile{std::nullopt, why_nothing_served(nothing), *domains};
  }
  const StoreProfile& stored = *found->stored;
  const std::string where = stored.match.file.string();
  if (!found->fits) {
    nothing.unfit_file = where;
    nothing.unfit_gpus_per_node = stored.profile.shape.gpus_per_node;
    return JobProfile{std::nullopt, why_nothing_served(nothing), *domains};
  }
  note(where + ": " + (stored.match.exact ? "exact" : "nearest") + " match for " +
       std::to_string(job->nodes) + " nodes, node type from " + describe_node_type_source(attempt));
  // The rule for a job whose GPUs per node nothing gives: the profile as tuned, said on stderr.
  if (!job->gpus_per_node)
    reporter.line(served_with_gpus_per_node_unknown(where, stored.profile.shape.gpus_per_node));
  return JobProfile{std::move(*found), "", *domains};
}

// The Inspector lines this job gets: none unless it asks (or the config says every job); one line
// on stderr when it asks and cannot have them. A variable the job sets itself stays the job's;
// a profiler plugin of the job's own keeps Inspector out altogether (NCCL loads one).
std::string inspector_lines(const EnvOptions& options, const InspectorConfig& config, EnvFormat format,
                            const Reporter& reporter) {
  const std::string_view asked = std::getenv("NCCLTUNE_INSPECTOR") ? std::getenv("NCCLTUNE_INSPECTOR") : "";
  if (!asked.empty() && asked != "0" && asked != "1")
    reporter.line("NCCLTUNE_INSPECTOR='" + printable_excerpt(asked, 40) +
                  "' is not 1, so the job does not ask for Inspector (NCCLTUNE_INSPECTOR=1 does)");
  const bool wanted = options.inspector || asked == "1" || config.every_job;
  if (!wanted) return "";
  if (!config.enabled()) {
    reporter.line("Inspector asked for, but the node config sets no env.inspector.plugin; it stays off");
    return "";
  }
  if (const char* own = std::getenv("NCCL_PROFILER_PLUGIN")) {
    print_error_line("nccltune env",
                     "NCCL_PROFILER_PLUGIN='" + printable_excerpt(own, 200) +
                         "' is set by the job: no Inspector for it (NCCL loads one profiler)");
    return "";
  }
  const std::string from = options.job_id.empty() ? "SLURM_JOB_ID" : "--job-id";
  std::string job_id = options.job_id;
  if (job_id.empty())
    if (const char* slurm = std::getenv("SLURM_JOB_ID")) job_id = slurm;
  Result<std::vector<EnvSetting>> settings = inspector_env(config, job_id, from);
  if (!settings) {
    reporter.line("Inspector stays off: " + settings.error());
    return "";
  }
  std::vector<EnvSetting> unset;
  for (EnvSetting& setting : *settings) {
    if (const char* own = std::getenv(setting.name.c_str())) {
      print_error_line("nccltune env", setting.name + "='" + printable_excerpt(own, 200) +
                                           "' is set by the job: left as it is, not Inspector's '" +
                                           printable_excerpt(setting.value, 200) + "'");
      continue;
    }
    unset.push_back(std::move(setting));
  }
  Result<std::string> text = render_inspector_env(unset, format);
  if (!text) {
    reporter.line("Inspector stays off: " + text.error());
    return "";
  }
  return *text;
}

// `text` on stdout; false, said, when it cannot be written.
bool print_out(const std::string& text, const Reporter& reporter) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    reporter.line("cannot write to stdout");
    return false;
  }
  return true;
}

int run_env(const EnvOptions& options) {
  const Reporter reporter(options.syslog || in_slurm_script());
  const int failed = options.strict ? kStrictFailure : 0;

  const std::optional<EnvFormat> format = parse_env_format(options.format);
  if (!format) {
    reporter.line("--format: '" + options.format +
                  "' is not sh, slurm, systemd, nccl-conf, json or tuner-csv");
    return failed;
  }
  if (!options.prefer.empty() && options.prefer != "below" && options.prefer != "above") {
    reporter.line("--prefer: '" + options.prefer + "' is not below or above");
    return failed;
  }
  if (const std::optional<std::string> off = disable_switch(); off) {
    if (*off == "1") {
      note("NCCLTUNE_DISABLE=1: the profile is off for this job; nothing printed");
      return 0;
    }
    if (!off->empty() && *off != "0")
      reporter.line("NCCLTUNE_DISABLE='" + printable_excerpt(*off, 40) +
                    "' is not 1, so the profile stays on (NCCLTUNE_DISABLE=1 turns it off)");
  }
  std::string config_file = options.config;
  if (config_file.empty()) {
    const char* from_environment = std::getenv("NCCLTUNE_CONFIG");
    if (from_environment && *from_environment) config_file = from_environment;
  }
  const bool named = !config_file.empty();
  if (!named) config_file = kDefaultConfigFile;
  const Result<EnvConfig> config = read_env_config(config_file, named);
  if (!config) {
    reporter.line(config.error());
    return failed;
  }
  const std::string inspector = inspector_lines(options, config->inspector, *format, reporter);
  const Result<JobProfile> found = job_profile(options, *config, reporter);
  if (!found) {
    reporter.line(found.error());
    print_out(inspector, reporter);
    return failed;
  }
  if (!found->found) {
    reporter.line(found->nothing_why);
    print_out(inspector, reporter);
    return failed;
  }

  const ServedProfile& served = found->found->served;
  const JobDomains& domains = found->domains;
  const EnvOrigin origin{served.sources, served.withheld, describe_job_domains(domains, "--domains"), domains.hosts,
                         domains.domains};
  const EnvEmission emission =
      render_env(served.profile, *format, config->allow_names, origin, job_own_env(served.profile));
  for (const std::string& warning : emission.warnings) reporter.line(warning);
  // The job's own settings win: each one the profile would have changed, on stderr only (not a
  // problem, so not syslog).
  for (const KeptOwnSetting& kept : emission.kept) print_error_line("nccltune env", describe_kept(kept));
  return print_out(emission.text + inspector, reporter) ? 0 : failed;
}

// run_env, failing open on whatever it throws (std::bad_alloc, a filesystem error, ...).
int run_env_failing_open(const EnvOptions& options) {
  try {
    return run_env(options);
  } catch (const std::exception& error) {
    Reporter(options.syslog || in_slurm_script()).line(std::string("internal error: ") + error.what());
    return options.strict ? kStrictFailure : 0;
  }
}

}  // namespace

int env_parse_failure(const CLI::App& app, const CLI::ParseError& error,
                      const std::vector<std::string>& words) {
  if (dynamic_cast<const CLI::Success*>(&error)) return app.exit(error);  // --help, --help-all, --version
  const auto has = [&words](std::string_view word) {
    return std::find(words.begin(), words.end(), word) != words.end();
  };
  Reporter(has("--syslog") || in_slurm_script()).line(error.what());
  return has("--strict") ? kStrictFailure : 0;
}

void add_env_options(CLI::App& sub, std::function<int()>& run) {
  auto options = std::make_shared<EnvOptions>();
  sub.add_option("--profiles", options->profiles, "Profile store root (default: env.store of the config)")
      ->type_name("DIR");
  sub.add_option("--nodes", options->nodes, "The job's node count (default: SLURM_JOB_NUM_NODES)")
      ->type_name("N");
  sub.add_option("--gpus-per-node", options->gpus_per_node,
                 "The job's GPUs (ranks) per node (default: SLURM_GPUS_ON_NODE, else SLURM_NTASKS_PER_NODE)")
      ->type_name("G");
  sub.add_option("--domains", options->domains,
                 "MNNVL node types: the NVLink domains the job's hosts make, NCCL's node count (default: "
                 "the store's one layout for this many hosts)")
      ->type_name("N");
  sub.add_option("--shape", options->shape, "Node type key, instead of node.yaml or reading this node")
      ->type_name("KEY");
  sub.add_option("--format", options->format, "sh, slurm, systemd, nccl-conf, json or tuner-csv")
      ->capture_default_str();
  sub.add_option("--config", options->config,
                 std::string("Node config (default: $NCCLTUNE_CONFIG, else ") + kDefaultConfigFile + ")")
      ->type_name("FILE");
  sub.add_option("--node-state", options->node_state, "The daemon's node state file")->capture_default_str();
  sub.add_option("--prefer", options->prefer,
                 "Without an exact node count: the nearest tuned count below or above (default: env.prefer)")
      ->type_name("below|above");
  sub.add_flag("--strict", options->strict, "Exit 2 on errors instead of 0");
  sub.add_flag("--inspector", options->inspector,
               "Also switch NCCL Inspector on for this job, as the node config's env.inspector says (as "
               "NCCLTUNE_INSPECTOR=1 does; sh, slurm and systemd formats; profiling costs the job time)");
  sub.add_option("--job-id", options->job_id,
                 "The job's id, naming its Inspector directory (default: SLURM_JOB_ID)")
      ->type_name("ID");
  sub.add_flag("--syslog", options->syslog,
               "Also log problems to syslog (always on under SLURM_SCRIPT_CONTEXT)");
  sub.add_option("--from", options->local.from,
                 "Local read without node.yaml: a node snapshot DIR, nvidia-smi:FILE, nvidia-smi-q:FILE or "
                 "hwloc:FILE")
      ->type_name("SRC");
  sub.add_option("--nvml-lib", options->local.nvml_lib, "Local read: NVML library to dlopen")
      ->capture_default_str();
  sub.add_option("--nccl-lib", options->local.nccl_lib,
                 "Local read: NCCL library (default: $NCCLTUNE_NCCL_LIB, else libnccl.so.2)")
      ->type_name("PATH");
  sub.add_option("--cuda-lib", options->local.cuda_lib,
                 "Local read: CUDA driver library (default: $NCCLTUNE_CUDA_LIB, else libcuda.so.1)")
      ->type_name("PATH");
  sub.callback([options, &run] { run = [options] { return run_env_failing_open(*options); }; });
}

}  // namespace nccltune
