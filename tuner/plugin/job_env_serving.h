// What the NCCL env plugin (libnccl-env-nccltune.so) serves a job, as a function: given the
// launcher's and nccltune's variables, where profiles live and the NCCL version that loaded the
// plugin, the NCCL_* values the job's profile sets, checked as `nccltune env` checks them
// (env_format.h, checked_env), and one log line for each thing that went wrong or was decided.
// Fail-open: any problem serves nothing. Reads the config, node state and store; nothing else.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "plugin/communicator_profile.h"

namespace nccltune {

struct NcclLibraryVersion {
  int major = 0, minor = 0, patch = 0;
};

struct JobEnv {
  std::map<std::string, std::string> values;  // name -> value, what getEnv answers
  std::vector<PluginLogLine> log;
};

// `environment`: NCCLTUNE_DISABLE, NCCLTUNE_DOMAINS and the variables of kLauncherShapeVariables,
// as the process has them. NCCLTUNE_DISABLE=1 serves nothing. On an MNNVL node type the launcher's
// nodes are hosts, and NCCLTUNE_DOMAINS (else the store, job_domains.h) says NCCL's node count. The job's shape comes from launcher_shape, its profile
// from find_job_profile (the store, its trust checks and serving rule, or NCCLTUNE_PROFILE), the
// allowed names and compatible NCCL versions from the node config. A profile tuned with another
// NCCL major.minor than `nccl` is served only when the config's env.nccl_compatible holds both.
JobEnv job_env(const std::map<std::string, std::string>& environment, const ProfileLocations& locations,
               NcclLibraryVersion nccl, uid_t caller_uid);

}  // namespace nccltune
