// The environment this node's single-node profile asks for, as nccltuned writes it to
// /run/nccltune/nccl.env (systemd EnvironmentFile) and, opt-in, into /etc/nccl.conf's marked
// block: find_profile_for_job(store, key, 1 node) + render_env, as `nccltune env --nodes 1`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/observed_network.h"
#include "node/env_config.h"

namespace nccltune {

// The profile a node's env comes from, as the metrics name it.
struct ActiveProfile {
  std::filesystem::path file;
  std::string node_type_key;
  int nodes = 0;
  std::string date;  // provenance.date, RFC 3339
};

struct NodeEnv {
  std::optional<ActiveProfile> profile;     // nullopt: the store has no profile for this key
  std::string environment_file;             // comment lines, then NAME=value lines
  std::string nccl_conf_body;               // NAME=value lines only; empty without a profile
  std::vector<std::string> warnings;        // names or values render_env dropped, profiles skipped
  std::optional<ObservedNetwork> observed;  // NCCL's account in the key's newest profile with one
};

// Errors: the store or the profile cannot be read (the caller keeps what it wrote before, since a
// store on a network file system may be back at the next scan).
Result<NodeEnv> resolve_node_env(const EnvConfig& config, const std::string& node_type_key);

}  // namespace nccltune
