#include "node/profile_for_job.h"

#include <utility>

namespace nccltune {

Result<ProfileForJob> find_profile_for_job(const std::filesystem::path& store, std::string_view node_type_key,
                                           const JobShape& job, bool prefer_below, uid_t caller_uid,
                                           ProfileParts parts) {
  Result<ProfileNeighbours> around = find_profiles_around(store, node_type_key, job.nodes);
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

}  // namespace nccltune
