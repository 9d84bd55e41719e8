// Which profile one NCCL communicator gets from the tuner plugin: NCCLTUNE_PROFILE (one file,
// used as it is), else the store of the node config (NCCLTUNE_PROFILES overrides its env.store)
// for this node's type (from nccltuned's node.yaml; the plugin never reads the topology itself)
// and the communicator's node count, through find_profile_for_job, the lookup `nccltune env`
// uses, with its serving rule for node counts that were not measured (profile/node_count_rule.h).
// Either way the world's section is used only when the communicator has shape.gpus_per_node ranks
// per node (nRanks == nNodes * gpus_per_node): a tensor- or pipeline-parallel group is not the
// full node the profile was measured on. A communicator (not a job: the env plugin serves the
// world's env) of a shape a v3 profile measured apart, a rail or a node, gets that section
// (shape_section.h). Never fails: what went wrong is in `log`, and then there is no profile and
// NCCL keeps its own choices.
//
// The lookup runs once per process for each communicator shape (and environment): every later
// communicator of that shape reuses its result, so a store on a stuck NFS server costs at most one
// blocked lookup per shape. In production, point NCCLTUNE_PROFILE at a node-local copy of the
// job's profile (copied from the store by the prolog or by configuration management) so that no
// NCCL application reads the shared store at all.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "node/job_shape.h"
#include "node/node_paths.h"
#include "profile/profile.h"

namespace nccltune {

struct ProfileLocations {
  std::filesystem::path profile_file;                 // NCCLTUNE_PROFILE; empty: look in the store
  std::filesystem::path store;                        // NCCLTUNE_PROFILES; empty: env.store of `config`
  std::filesystem::path config = kDefaultConfigFile;  // NCCLTUNE_CONFIG
  bool config_named = false;                          // NCCLTUNE_CONFIG set: it must exist
  std::filesystem::path node_state = kDefaultNodeStateFile;  // NCCLTUNE_NODE_STATE
  auto operator<=>(const ProfileLocations&) const = default;
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

// One lookup for a job of `job`'s shape, uncached. `caller_uid`: whose ownership of the store is
// trusted besides root's. `job` counts hosts, as launchers do; on an MNNVL node type `domains`
// (NCCLTUNE_DOMAINS as set; nullopt: unset) or the store says NCCL's node count (job_domains.h).
CommunicatorProfile find_job_profile(const ProfileLocations& locations, const JobShape& job,
                                     uid_t caller_uid, const std::optional<std::string>& domains = std::nullopt);

// find_job_profile for a communicator of `ranks` over `nodes`.
CommunicatorProfile find_communicator_profile(const ProfileLocations& locations, std::size_t ranks,
                                              std::size_t nodes, uid_t caller_uid);

struct CachedCommunicatorProfile {
  std::shared_ptr<const CommunicatorProfile> found;  // never null
  bool from_cache = false;  // an earlier init in this process did the lookup and logged it
};

// find_communicator_profile once per process for each (locations, ranks, nodes, caller_uid);
// safe to call from several threads: one lookup runs while the others of that shape wait for it,
// lookups of other shapes go on. A lookup that throws is not remembered.
CachedCommunicatorProfile cached_communicator_profile(const ProfileLocations& locations, std::size_t ranks,
                                                      std::size_t nodes, uid_t caller_uid);

}  // namespace nccltune
