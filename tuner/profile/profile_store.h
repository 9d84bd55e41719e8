// The profile store (docs/ARCHITECTURE.md, "File formats"): <store>/<node type key>/<nodes>n.yaml
// (<nodes>n<hosts>h.yaml for an MNNVL profile, profile_file_name), so a prolog finds a job's
// profile by name instead of parsing every file. find_profile only picks the
// file; load_store_profile also checks that it may be trusted, reads it and checks it belongs there.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "profile/profile.h"

namespace nccltune {

struct ProfileMatch {
  std::filesystem::path file;
  int tuned_nodes = 0;  // the node count the profile was tuned for (NCCL's: NVLink domains on MNNVL)
  bool exact = false;   // tuned_nodes == the job's node count
  int tuned_hosts = 0;  // an MNNVL profile's hosts (<nodes>n<hosts>h.yaml); 0 for <nodes>n.yaml
};

// What a store file's name says: <nodes>n.yaml (hosts 0: a node is a host) or, for an MNNVL
// profile, <nodes>n<hosts>h.yaml (NCCL's nodes are NVLink domains of hosts / nodes hosts each).
struct StoreFileName {
  int nodes = 0, hosts = 0;
  bool mnnvl() const { return hosts > 0; }
  auto operator<=>(const StoreFileName&) const = default;
};
// "1n4h.yaml" -> {1, 4}; "16n.yaml" -> {16, 0}; nullopt for any other name (no leading zeros, no
// sign, counts at most INT_MAX, hosts a multiple of nodes).
std::optional<StoreFileName> parse_profile_file_name(std::string_view file_name);
// The profile names of one node type's directory, ascending by (nodes, hosts); none when it
// cannot be listed.
std::vector<StoreFileName> stored_profile_names(const std::filesystem::path& directory);

// Which of a node type's profiles a lookup weighs against each other: the host-counted ones
// (<nodes>n.yaml: hosts_per_node 0), or the MNNVL ones whose NCCL nodes are NVLink domains of
// hosts_per_node hosts each (<nodes>n<nodes x hosts_per_node>h.yaml: 1n4h, 2n8h, 4n16h are one
// layout, 2n4h another). Node counts stand in for each other only within a layout: a domain of 4
// hosts and one of 2 make other NCCL nodes (ranks per node), and a host-counted node another still.
struct StoreLayout {
  int hosts_per_node = 0;
  bool mnnvl() const { return hosts_per_node > 0; }
  auto operator<=>(const StoreLayout&) const = default;
};
// The file name of `nodes` NCCL nodes in `layout`: "4n.yaml", "1n4h.yaml".
std::string profile_file_name(int nodes, StoreLayout layout);
// The layout a profile is stored in: its hosts per NCCL node when MNNVL, else host-counted.
StoreLayout layout_of(const ProfileShape& shape);
// The node counts of one layout's profiles in a directory, ascending (stored_node_counts for the
// host-counted one): the counts a profile's show and report name beside it.
std::vector<int> stored_node_counts(const std::filesystem::path& directory, StoreLayout layout);
// The MNNVL layouts among a directory's profile names, ascending by hosts per node.
std::vector<StoreLayout> stored_mnnvl_layouts(const std::filesystem::path& directory);

// <store>/<node_type_key>/<nodes>n.yaml when it exists; else, for a job of several nodes, the
// nearest multi-node <k>n.yaml (k >= 2) in the same key directory, the closest below `nodes`
// preferred (closest above when !prefer_below), the other side when the preferred one has none;
// a one-node job gets 1n.yaml or nothing, and a multi-node job never 1n.yaml (one node and a
// network are different regimes). nullopt when nothing fits. Other files in the directory are ignored: only
// ^[0-9]+n\.yaml$ names are profiles. Errors: a key that is not a valid node type key
// (is_valid_node_type_key), nodes < 1, a key directory that exists but cannot be read.
// In an MNNVL `layout` the same with its names (<nodes>n<hosts>h.yaml of that layout only).
Result<std::optional<ProfileMatch>> find_profile(const std::filesystem::path& store,
                                                 std::string_view node_type_key, int nodes,
                                                 bool prefer_below, StoreLayout layout = {});

// The measured counts around a job: the exact one, else the nearest below and above (multi-node
// counts only for a job of several nodes; a one-node job has only its exact count), each with
// find_profile's rules.
struct ProfileNeighbours {
  std::optional<ProfileMatch> exact, below, above;
};
Result<ProfileNeighbours> find_profiles_around(const std::filesystem::path& store,
                                               std::string_view node_type_key, int nodes,
                                               StoreLayout layout = {});

struct StoreProfile {
  Profile profile;
  ProfileMatch match;
};

// The one lookup every reader of the store uses (`nccltune env`, the tuner plugin, nccltuned):
// find_profile, then the trust checks of store_permissions.h for `uid` (the file read through the
// checked descriptor), then parse_profile, then that the profile's shape.node_type_key is the directory's
// name and its shape.nodes, shape.mnnvl and shape.hosts the file name's counts (a file copied to the wrong place would otherwise
// tune jobs it was not measured for). nullopt when the key has no profile; any other problem is an
// error of one line naming the file. Whether the profile fits a job's GPUs per node is left to the
// caller (profile_fits_job, job_shape.h).
Result<std::optional<StoreProfile>> load_store_profile(const std::filesystem::path& store,
                                                       std::string_view key, int nodes, bool prefer_below,
                                                       uid_t uid);
// The same checks for one file find_profile or find_profiles_around named; `parts` as
// parse_profile reads them.
Result<StoreProfile> load_matched_profile(const std::filesystem::path& store, std::string_view key,
                                          const ProfileMatch& match, uid_t uid,
                                          ProfileParts parts = ProfileParts::whole);

// The node counts of the host-counted profiles in one node type's directory (<N>n.yaml), ascending;
// none when it cannot be listed. MNNVL profiles (<N>n<H>h.yaml) are stored_profile_names'.
std::vector<int> stored_node_counts(const std::filesystem::path& directory);

// The node count a host-counted store file name stands for: "16n.yaml" -> 16; nullopt for any
// other name (^[0-9]+n\.yaml$ only, no leading zeros, at most INT_MAX; an MNNVL name included).
std::optional<int> profile_file_nodes(std::string_view file_name);

}  // namespace nccltune
