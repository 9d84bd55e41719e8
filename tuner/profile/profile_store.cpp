#include "profile/profile_store.h"

#include <charconv>
#include <limits>
#include <string>
#include <system_error>

#include "base/printable_text.h"
#include "profile/store_permissions.h"

namespace nccltune {

namespace {

std::string file_name_for(int nodes) {
  return std::to_string(nodes) + "n.yaml";
}

// Of two tuned counts on the same side of the job, the nearer; across sides, the preferred side.
bool better_candidate(int candidate, int current, int nodes, bool prefer_below) {
  const bool candidate_below = candidate < nodes, current_below = current < nodes;
  if (candidate_below != current_below) return candidate_below == prefer_below;
  return candidate_below ? candidate > current : candidate < current;
}

}  // namespace

std::optional<int> profile_file_nodes(std::string_view file_name) {
  constexpr std::string_view kSuffix = "n.yaml";
  if (file_name.size() <= kSuffix.size() || !file_name.ends_with(kSuffix)) return std::nullopt;
  const std::string_view digits = file_name.substr(0, file_name.size() - kSuffix.size());
  if (digits.front() < '1' || digits.front() > '9')
    return std::nullopt;  // no sign; "02n.yaml" is not "2n.yaml"
  int nodes = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), nodes);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return nodes;
}

Result<std::optional<ProfileMatch>> find_profile(const std::filesystem::path& store,
                                                 std::string_view node_type_key, int nodes,
                                                 bool prefer_below) {
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
  const std::filesystem::path directory = store / std::string(node_type_key);
  const std::filesystem::path exact = directory / file_name_for(nodes);
  if (std::filesystem::exists(std::filesystem::symlink_status(exact, error)))
    return std::optional<ProfileMatch>(ProfileMatch{exact, nodes, true});

  // One node and several never stand in for each other: NCCL runs another algorithm on one node
  // (NVLS, Ring over NVLink) than across a network (NVLSTree, Ring over the NICs).
  if (nodes == 1) return std::optional<ProfileMatch>();
  const auto directory_status = std::filesystem::status(directory, error);
  if (directory_status.type() == std::filesystem::file_type::not_found) return std::optional<ProfileMatch>();
  if (error) return Error{directory.string() + ": cannot be read: " + error.message()};
  if (!std::filesystem::is_directory(directory_status))
    return Error{directory.string() + ": not a directory"};

  std::optional<int> best;
  for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end;
       entry.increment(error)) {
    const std::optional<int> tuned = profile_file_nodes(entry->path().filename().native());
    if (tuned && *tuned > 1 && (!best || better_candidate(*tuned, *best, nodes, prefer_below))) best = tuned;
  }
  if (error) return Error{directory.string() + ": cannot list: " + error.message()};
  if (!best) return std::optional<ProfileMatch>();
  return std::optional<ProfileMatch>(ProfileMatch{directory / file_name_for(*best), *best, false});
}

Result<std::optional<StoreProfile>> load_store_profile(const std::filesystem::path& store,
                                                       std::string_view key, int nodes, bool prefer_below,
                                                       uid_t uid) {
  Result<std::optional<ProfileMatch>> match = find_profile(store, key, nodes, prefer_below);
  if (!match) return Error{match.error()};
  if (!*match) return std::optional<StoreProfile>();
  ProfileMatch& found = **match;
  const Result<TrustedFile> trusted = read_trusted_file(store, found.file, uid, kMaxProfileBytes);
  if (!trusted) return Error{trusted.error()};
  const std::string where = printable_excerpt(found.file.native(), 200);
  Result<Profile> profile = parse_profile(trusted->text, where);
  if (!profile) return Error{profile.error()};

  // A file copied to the wrong place would otherwise tune jobs it was not measured for.
  if (profile->shape.node_type_key != key)
    return Error{where + ": shape.key '" + printable_excerpt(profile->shape.node_type_key, 80) +
                 "' does not match its directory '" + std::string(key) + "'"};
  if (profile->shape.nodes != found.tuned_nodes)
    return Error{where + ": shape.nodes " + std::to_string(profile->shape.nodes) +
                 " does not match its file name"};
  return std::optional<StoreProfile>(StoreProfile{std::move(*profile), std::move(found)});
}

}  // namespace nccltune
