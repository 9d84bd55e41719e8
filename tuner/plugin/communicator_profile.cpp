#include "communicator_profile.h"

#include <climits>
#include <cstdlib>
#include <system_error>
#include <utility>

#include "env_config.h"
#include "node_state.h"
#include "profile_store.h"
#include "store_permissions.h"

namespace nccltune {
namespace {

std::filesystem::path environment_path(const char* name, std::filesystem::path fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::filesystem::path(value) : std::move(fallback);
}

std::string shape_text(int nodes, std::size_t ranks) {
  return std::to_string(nodes) + (nodes == 1 ? " node, " : " nodes, ") + std::to_string(ranks) +
         (ranks == 1 ? " rank" : " ranks");
}

struct Lookup {
  CommunicatorProfile result;
  void info(std::string text) { result.log.push_back({false, std::move(text)}); }
  void warn(std::string text) {
    result.log.push_back({true, std::move(text) + "; NCCL's own choices stand"});
  }
};

void from_named_file(Lookup& lookup, const std::filesystem::path& file, std::size_t ranks, int nodes) {
  Result<Profile> profile = read_profile(file);
  if (!profile) return lookup.warn(profile.error());
  const ProfileShape& shape = profile->shape;
  std::string note = "using " + file.string() + " (NCCLTUNE_PROFILE)";
  if (shape.nodes != nodes || static_cast<std::size_t>(shape.ranks) != ranks)
    note += ", tuned for " + shape_text(shape.nodes, static_cast<std::size_t>(shape.ranks)) +
            ", used as named for this communicator of " + shape_text(nodes, ranks);
  lookup.info(std::move(note));
  lookup.result.profile = std::move(*profile);
  lookup.result.file = file;
}

void from_store(Lookup& lookup, const ProfileLocations& locations, std::size_t ranks, int nodes,
                uid_t caller_uid) {
  Result<EnvConfig> config = read_env_config(locations.config);
  if (!config) return lookup.warn(config.error());
  const std::filesystem::path store = locations.store.empty() ? config->store : locations.store;

  std::error_code error;
  if (!std::filesystem::exists(locations.node_state, error))
    return lookup.info("no node type: " + locations.node_state.string() +
                       " does not exist (nccltuned writes it; NCCLTUNE_PROFILE names a profile without it)");
  Result<std::string> key = read_node_type_key(locations.node_state);
  if (!key) return lookup.warn(key.error());

  Result<std::optional<ProfileMatch>> match = find_profile(store, *key, nodes, config->prefer_below);
  if (!match) return lookup.warn(match.error());
  if (!*match)
    return lookup.info("no profile for " + *key + " in " + store.string() + " (" + shape_text(nodes, ranks) +
                       ")");
  const ProfileMatch& found = **match;

  Result<std::filesystem::path> trusted = trusted_profile_path(store, found.file, caller_uid);
  if (!trusted) return lookup.warn(trusted.error());
  Result<Profile> profile = read_profile(*trusted);
  if (!profile) return lookup.warn(profile.error());

  // A profile tuned at another node count stands in only when it was measured with as many ranks
  // as this communicator has (a node-local communicator of 8 ranks is not a 16-rank job).
  const std::size_t tuned_ranks = static_cast<std::size_t>(profile->shape.ranks);
  if (tuned_ranks != ranks) {
    if (!found.exact)
      return lookup.info("not using " + found.file.string() + ": tuned for " +
                         shape_text(found.tuned_nodes, tuned_ranks) + ", this communicator has " +
                         shape_text(nodes, ranks));
    lookup.info(found.file.string() + " was tuned with " + std::to_string(tuned_ranks) +
                " ranks, this communicator has " + std::to_string(ranks) + "; used for the same node count");
  }
  lookup.info("using " + found.file.string() +
              (found.exact ? "" : " (nearest tuned node count, " + std::to_string(found.tuned_nodes) + ")") +
              " for " + shape_text(nodes, ranks));
  lookup.result.profile = std::move(*profile);
  lookup.result.file = found.file;
}

}  // namespace

ProfileLocations profile_locations_from_environment() {
  ProfileLocations locations;
  locations.profile_file = environment_path("NCCLTUNE_PROFILE", {});
  locations.store = environment_path("NCCLTUNE_PROFILES", {});
  locations.config = environment_path("NCCLTUNE_CONFIG", locations.config);
  locations.node_state = environment_path("NCCLTUNE_NODE_STATE", locations.node_state);
  return locations;
}

CommunicatorProfile find_communicator_profile(const ProfileLocations& locations, std::size_t ranks,
                                              std::size_t nodes, uid_t caller_uid) {
  Lookup lookup;
  const int node_count = nodes > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(nodes);
  if (!locations.profile_file.empty())
    from_named_file(lookup, locations.profile_file, ranks, node_count);
  else
    from_store(lookup, locations, ranks, node_count, caller_uid);
  return std::move(lookup.result);
}

}  // namespace nccltune
