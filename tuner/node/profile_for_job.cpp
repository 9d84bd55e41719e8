#include "node/profile_for_job.h"

#include <utility>

namespace nccltune {

Result<ProfileForJob> find_profile_for_job(const std::filesystem::path& store, std::string_view node_type_key,
                                           const JobShape& job, bool prefer_below, uid_t caller_uid) {
  Result<std::optional<StoreProfile>> loaded =
      load_store_profile(store, node_type_key, job.nodes, prefer_below, caller_uid);
  if (!loaded) return Error{loaded.error()};
  ProfileForJob result;
  result.stored = std::move(*loaded);
  result.fits = result.stored && profile_fits_job(result.stored->profile.shape, job);
  return result;
}

}  // namespace nccltune
