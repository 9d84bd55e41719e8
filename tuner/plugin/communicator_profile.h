// Which profile one NCCL communicator gets from the tuner plugin: NCCLTUNE_PROFILE (one file,
// used as it is), else the store of the node config (NCCLTUNE_PROFILES overrides its env.store)
// for this node's type (from nccltuned's node.yaml; the plugin never reads the topology itself)
// and the communicator's node count, with the trust checks `nccltune env` applies. Never fails: what went
// wrong is in `log`, and then there is no profile and NCCL keeps its own choices.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profile.h"

namespace nccltune {

struct ProfileLocations {
  std::filesystem::path profile_file;  // NCCLTUNE_PROFILE; empty: look in the store
  std::filesystem::path store;         // NCCLTUNE_PROFILES; empty: env.store of `config`
  std::filesystem::path config = "/etc/nccltune/nccltune.yaml";  // NCCLTUNE_CONFIG
  std::filesystem::path node_state = "/run/nccltune/node.yaml";  // NCCLTUNE_NODE_STATE
};

// The locations above, with the environment's overrides.
ProfileLocations profile_locations_from_environment();

struct PluginLogLine {
  bool warning = false;  // a broken file or store, not merely "no profile here"
  std::string text;
};

struct CommunicatorProfile {
  std::optional<Profile> profile;
  std::filesystem::path file;
  std::vector<PluginLogLine> log;
};

// `caller_uid`: whose ownership of the store is trusted besides root's (the effective uid).
CommunicatorProfile find_communicator_profile(const ProfileLocations& locations, std::size_t ranks,
                                              std::size_t nodes, uid_t caller_uid);

}  // namespace nccltune
