#include "profile/profile_store.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <system_error>

#include "base/printable_text.h"
#include "profile/store_permissions.h"

namespace nccltune {

namespace {

StoreFileName name_in(int nodes, StoreLayout layout) {
  return {nodes, layout.mnnvl() ? nodes * layout.hosts_per_node : 0};
}

ProfileMatch match_for(const std::filesystem::path& directory, int tuned, StoreLayout layout, bool exact) {
  const StoreFileName name = name_in(tuned, layout);
  return {directory / profile_file_name(tuned, layout), tuned, exact, name.hosts};
}

}  // namespace

namespace {

// A count of a store file name: digits, no sign, no leading zero ("02n.yaml" is not "2n.yaml").
std::optional<int> name_count(std::string_view digits) {
  if (digits.empty() || digits.front() < '1' || digits.front() > '9') return std::nullopt;
  int count = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return count;
}

}  // namespace

std::optional<StoreFileName> parse_profile_file_name(std::string_view file_name) {
  constexpr std::string_view kYaml = ".yaml";
  if (!file_name.ends_with(kYaml)) return std::nullopt;
  std::string_view counts = file_name.substr(0, file_name.size() - kYaml.size());
  const std::size_t n = counts.find('n');
  if (n == std::string_view::npos) return std::nullopt;
  const std::optional<int> nodes = name_count(counts.substr(0, n));
  if (!nodes) return std::nullopt;
  const std::string_view rest = counts.substr(n + 1);
  if (rest.empty()) return StoreFileName{*nodes, 0};
  if (!rest.ends_with('h')) return std::nullopt;
  const std::optional<int> hosts = name_count(rest.substr(0, rest.size() - 1));
  // tune never writes a name whose hosts do not make whole NVLink domains (profile_reader).
  if (!hosts || *hosts < *nodes || *hosts % *nodes != 0) return std::nullopt;
  return StoreFileName{*nodes, *hosts};
}

std::optional<int> profile_file_nodes(std::string_view file_name) {
  const std::optional<StoreFileName> name = parse_profile_file_name(file_name);
  if (!name || name->mnnvl()) return std::nullopt;
  return name->nodes;
}

std::vector<StoreFileName> stored_profile_names(const std::filesystem::path& directory) {
  std::vector<StoreFileName> names;
  std::error_code error;
  for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end;
       entry.increment(error))
    if (const std::optional<StoreFileName> name = parse_profile_file_name(entry->path().filename().native()))
      names.push_back(*name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string profile_file_name(int nodes, StoreLayout layout) {
  return std::to_string(nodes) + "n" +
         (layout.mnnvl() ? std::to_string(nodes * layout.hosts_per_node) + "h" : std::string()) + ".yaml";
}

StoreLayout layout_of(const ProfileShape& shape) {
  return {shape.mnnvl ? shape.host_count() / shape.nodes : 0};
}

std::vector<int> stored_node_counts(const std::filesystem::path& directory, StoreLayout layout) {
  std::vector<int> counts;
  for (const StoreFileName& name : stored_profile_names(directory))
    if (name == name_in(name.nodes, layout)) counts.push_back(name.nodes);
  return counts;
}

std::vector<StoreLayout> stored_mnnvl_layouts(const std::filesystem::path& directory) {
  std::vector<StoreLayout> layouts;
  for (const StoreFileName& name : stored_profile_names(directory))
    if (name.mnnvl()) layouts.push_back({name.hosts / name.nodes});
  std::sort(layouts.begin(), layouts.end());
  layouts.erase(std::unique(layouts.begin(), layouts.end()), layouts.end());
  return layouts;
}

std::vector<int> stored_node_counts(const std::filesystem::path& directory) {
  return stored_node_counts(directory, StoreLayout{});
}

Result<ProfileNeighbours> find_profiles_around(const std::filesystem::path& store,
                                               std::string_view node_type_key, int nodes,
                                               StoreLayout layout) {
  if (!is_valid_node_type_key(node_type_key))
    return Error{"node type key '" + printable_excerpt(node_type_key, 80) +
                 "' is not a name from [A-Za-z0-9._-]"};
  if (nodes < 1) return Error{"node count " + std::to_string(nodes) + " is not a whole number from 1"};

  std::error_code error;
  const auto store_status = std::filesystem::status(store, error);
  if (!std::filesystem::is_directory(store_status))
    return Error{store.string() + ": profile store " +
                 (error ? "cannot be read: " + error.message() : std::string("is not a directory"))};

  // The common case ends here, at the exact file. Any entry by that name counts (a broken one is
  // reported by whoever opens it rather than silently replaced by a neighbour).
  ProfileNeighbours around;
  const std::filesystem::path directory = store / std::string(node_type_key);
  const ProfileMatch exact = match_for(directory, nodes, layout, true);
  if (std::filesystem::exists(std::filesystem::symlink_status(exact.file, error))) {
    around.exact = exact;
    return around;
  }

  // One node and several never stand in for each other: NCCL runs another algorithm on one node
  // (NVLS, Ring over NVLink) than across a network (NVLSTree, Ring over the NICs).
  if (nodes == 1) return around;
  const auto directory_status = std::filesystem::status(directory, error);
  if (directory_status.type() == std::filesystem::file_type::not_found) return around;
  if (error) return Error{directory.string() + ": cannot be read: " + error.message()};
  if (!std::filesystem::is_directory(directory_status))
    return Error{directory.string() + ": not a directory"};

  std::optional<int> below, above;
  for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end;
       entry.increment(error)) {
    const std::optional<StoreFileName> name = parse_profile_file_name(entry->path().filename().native());
    if (!name || *name != name_in(name->nodes, layout)) continue;  // another layout
    const std::optional<int> tuned = name->nodes;
    if (*tuned < 2) continue;
    if (*tuned < nodes && (!below || *tuned > *below)) below = tuned;
    if (*tuned > nodes && (!above || *tuned < *above)) above = tuned;
  }
  if (error) return Error{directory.string() + ": cannot list: " + error.message()};
  if (below) around.below = match_for(directory, *below, layout, false);
  if (above) around.above = match_for(directory, *above, layout, false);
  return around;
}

Result<std::optional<ProfileMatch>> find_profile(const std::filesystem::path& store,
                                                 std::string_view node_type_key, int nodes,
                                                 bool prefer_below, StoreLayout layout) {
  Result<ProfileNeighbours> around = find_profiles_around(store, node_type_key, nodes, layout);
  if (!around) return Error{around.error()};
  if (around->exact) return around->exact;
  if (prefer_below) return around->below ? around->below : around->above;
  return around->above ? around->above : around->below;
}

Result<StoreProfile> load_matched_profile(const std::filesystem::path& store, std::string_view key,
                                          const ProfileMatch& match, uid_t uid, ProfileParts parts) {
  const Result<TrustedFile> trusted = read_trusted_file(store, match.file, uid, kMaxProfileBytes);
  if (!trusted) return Error{trusted.error()};
  const std::string where = printable_excerpt(match.file.native(), 200);
  Result<Profile> profile = parse_profile(trusted->text, where, parts);
  if (!profile) return Error{profile.error()};

  // A file copied to the wrong place would otherwise tune jobs it was not measured for.
  if (profile->shape.node_type_key != key)
    return Error{where + ": shape.key '" + printable_excerpt(profile->shape.node_type_key, 80) +
                 "' does not match its directory '" + std::string(key) + "'"};
  if (profile->shape.nodes != match.tuned_nodes)
    return Error{where + ": shape.nodes " + std::to_string(profile->shape.nodes) +
                 " does not match its file name"};
  if (profile->shape.mnnvl != (match.tuned_hosts > 0))
    return Error{where + ": shape.mnnvl " + (profile->shape.mnnvl ? "true" : "false") +
                 " does not match its file name (" +
                 (profile->shape.mnnvl ? "<nodes>n<hosts>h.yaml holds" : "only <nodes>n<hosts>h.yaml holds") +
                 " MNNVL profiles)"};
  if (profile->shape.mnnvl && profile->shape.host_count() != match.tuned_hosts)
    return Error{where + ": shape.hosts " + std::to_string(profile->shape.host_count()) +
                 " does not match its file name"};
  return StoreProfile{std::move(*profile), match};
}

Result<std::optional<StoreProfile>> load_store_profile(const std::filesystem::path& store,
                                                       std::string_view key, int nodes, bool prefer_below,
                                                       uid_t uid) {
  Result<std::optional<ProfileMatch>> match = find_profile(store, key, nodes, prefer_below);
  if (!match) return Error{match.error()};
  if (!*match) return std::optional<StoreProfile>();
  Result<StoreProfile> loaded = load_matched_profile(store, key, **match, uid);
  if (!loaded) return Error{loaded.error()};
  return std::optional<StoreProfile>(std::move(*loaded));
}

}  // namespace nccltune
