#include "plugin/job_env_serving.h"

#include "base/printable_text.h"
#include "node/env_config.h"
#include "node/env_format.h"
#include "node/launcher_shape.h"
#include "profile/nccl_names.h"

namespace nccltune {

namespace {

std::string version_text(int major_minor) {
  return std::to_string(major_minor / 100) + "." + std::to_string(major_minor % 100);
}

// Why a profile tuned with `tuned` (an NCCL version code, 22809) is not for a job that loads
// `job` (major * 100 + minor), or "" when it is.
std::string version_mismatch(int tuned, int job, const std::optional<NcclVersionRange>& compatible) {
  const int tuned_major_minor = tuned / 10000 * 100 + tuned / 100 % 100;
  if (tuned_major_minor == job) return "";
  if (compatible && compatible->holds(tuned_major_minor) && compatible->holds(job)) return "";
  return "tuned for " + version_text(tuned_major_minor) + ", this job loads " + version_text(job) +
         (compatible ? " (env.nccl_compatible: " + version_text(compatible->low) + "-" +
                           version_text(compatible->high) + ")"
                     : " (env.nccl_compatible allows none other)");
}

}  // namespace

JobEnv job_env(const std::map<std::string, std::string>& environment, const ProfileLocations& locations,
               NcclLibraryVersion nccl, uid_t caller_uid) {
  JobEnv served;
  const auto info = [&served](std::string text) { served.log.push_back({false, std::move(text)}); };
  const auto warn = [&served](std::string text) {
    served.log.push_back({true, std::move(text) + "; NCCL's own settings stand"});
  };
  if (const auto off = environment.find("NCCLTUNE_DISABLE"); off != environment.end()) {
    if (off->second == "1") {
      info("NCCLTUNE_DISABLE=1: serving nothing");
      return served;
    }
    // As `nccltune env` says it: only 1 turns the profile off.
    if (!off->second.empty() && off->second != "0")
      served.log.push_back(
          {true, "NCCLTUNE_DISABLE='" + printable_excerpt(off->second, 40) +
                     "' is not 1, so the profile stays on (NCCLTUNE_DISABLE=1 turns it off)"});
  }
  const Result<LauncherShape> shape = launcher_shape(environment);
  if (!shape) {
    info(shape.error() + "; serving nothing");
    return served;
  }
  const Result<EnvConfig> config = read_env_config(locations.config, locations.config_named);
  if (!config) {
    warn(config.error());
    return served;
  }
  std::optional<std::string> domains;
  if (const auto given = environment.find("NCCLTUNE_DOMAINS"); given != environment.end() && !given->second.empty())
    domains = given->second;
  CommunicatorProfile found = find_job_profile(locations, shape->job, caller_uid, domains);
  served.log.insert(served.log.end(), found.log.begin(), found.log.end());
  if (!found.profile) return served;
  const Result<int> tuned = parse_nccl_version(found.profile->shape.nccl_version);
  if (!tuned) {
    warn(found.file.string() + ": shape.nccl_version: " + tuned.error());
    return served;
  }
  if (const std::string why =
          version_mismatch(*tuned, nccl.major * 100 + nccl.minor, config->nccl_compatible);
      !why.empty()) {
    warn("not serving " + found.file.string() + ": " + why);
    return served;
  }
  std::vector<std::string> dropped;
  for (EnvSetting& setting : checked_env(*found.profile, config->allow_names, dropped))
    served.values.emplace(std::move(setting.name), std::move(setting.value));
  for (std::string& line : dropped) served.log.push_back({true, found.file.string() + ": " + line});
  info("serving " + std::to_string(served.values.size()) + " variable(s) of " + found.file.string() +
       " (job shape from " + shape->source + ")");
  return served;
}

}  // namespace nccltune
