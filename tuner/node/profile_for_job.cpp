#include "node/profile_for_job.h"

#include <utility>

namespace nccltune {

namespace {

// The lookup within one layout of the store: the exact count, else the serving rule between the
// measured counts around it.
Result<ProfileForJob> find_in_layout(const std::filesystem::path& store, std::string_view node_type_key,
                                     const JobShape& job, StoreLayout layout, bool prefer_below, uid_t caller_uid,
                                     ProfileParts parts) {
  Result<ProfileNeighbours> around = find_profiles_around(store, node_type_key, job.nodes, layout);
  if (!around) return Error{around.error()};
  const auto load = [&](const std::optional<ProfileMatch>& match) -> Result<std::optional<StoreProfile>> {
    if (!match) return std::optional<StoreProfile>();
    Result<StoreProfile> loaded = load_matched_profile(store, node_type_key, *match, caller_uid, parts);
    if (!loaded) return Error{loaded.error()};
    return std::optional<StoreProfile>(std::move(*loaded));
  };
  ProfileForJob result;
  if (around->exact) {
    Result<std::optional<StoreProfile>> exact = load(around->exact);
    if (!exact) return Error{exact.error()};
    result.stored = std::move(*exact);
    result.served.profile = result.stored->profile;
    result.served.sources = {result.stored->match.file.string()};
  } else {
    Result<std::optional<StoreProfile>> below = load(around->below);
    if (!below) return Error{below.error()};
    Result<std::optional<StoreProfile>> above = load(around->above);
    if (!above) return Error{above.error()};
    if (!*below && !*above) return result;
    const bool use_below = *below && (prefer_below || !*above);
    const auto side = [](const std::optional<StoreProfile>& s) {
      return s ? MeasuredCount{&s->profile, s->match.file.string()} : MeasuredCount{};
    };
    result.served = serve_unmeasured_count(job.nodes, side(*below), side(*above), use_below);
    result.stored = std::move(use_below ? *below : *above);
  }
  result.fits = profile_fits_job(result.stored->profile.shape, job);
  return result;
}

bool exact(const ProfileForJob& found) {
  return found.stored && found.stored->match.exact;
}

}  // namespace

Result<ProfileForJob> find_profile_for_job(const std::filesystem::path& store, std::string_view node_type_key,
                                           const JobShape& job, bool prefer_below, uid_t caller_uid,
                                           ProfileParts parts) {
  StoreLayout layout;
  if (job.hosts && job.nodes > 0) layout.hosts_per_node = *job.hosts / job.nodes;
  return find_in_layout(store, node_type_key, job, layout, prefer_below, caller_uid, parts);
}

Result<ProfileForJob> find_profile_for_communicator(const std::filesystem::path& store,
                                                    std::string_view node_type_key, const JobShape& job,
                                                    const std::function<bool(const Profile&)>& measured_apart,
                                                    bool prefer_below, uid_t caller_uid, ProfileParts parts) {
  Result<ProfileForJob> hosted = find_in_layout(store, node_type_key, job, {}, prefer_below, caller_uid, parts);
  if (!hosted || (exact(*hosted) && hosted->fits)) return hosted;
  if (!is_valid_node_type_key(node_type_key)) return hosted;
  std::vector<ProfileForJob> by_layout;
  for (const StoreLayout layout : stored_mnnvl_layouts(store / std::string(node_type_key))) {
    Result<ProfileForJob> found = find_in_layout(store, node_type_key, job, layout, prefer_below, caller_uid, parts);
    if (!found) return found;
    if (exact(*found) && found->fits) return found;
    if (found->stored) by_layout.push_back(std::move(*found));
  }
  const auto apart = [&](const ProfileForJob& found) {
    return exact(found) && measured_apart && measured_apart(found.stored->profile);
  };
  if (apart(*hosted)) return hosted;
  for (ProfileForJob& found : by_layout)
    if (apart(found)) return std::move(found);
  if (hosted->fits) return hosted;
  for (ProfileForJob& found : by_layout)
    if (found.fits) return std::move(found);
  // Nothing serves it: the profile that comes nearest, for the line that says why.
  if (hosted->stored) return hosted;
  for (ProfileForJob& found : by_layout)
    if (exact(found)) return std::move(found);
  return hosted;
}

}  // namespace nccltune
