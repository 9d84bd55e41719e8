// The one rule for which stored profile a job or a communicator gets, for `nccltune env`, the
// tuner plugin and nccltuned alike: the store's file for this node type and the nearest tuned node
// count (find_profile), trusted and checked (load_store_profile), and used only when it was tuned
// with the job's GPUs per node (profile_fits_job).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string_view>

#include "base/result.h"
#include "node/job_shape.h"
#include "profile/profile_store.h"

namespace nccltune {

struct ProfileForJob {
  std::optional<StoreProfile> stored;  // what the store holds for the key and node count; nullopt: nothing
  bool fits = false;                   // stored, and tuned with the job's GPUs per node: use it

  const Profile* profile() const { return fits ? &stored->profile : nullptr; }
};

// Errors: an untrusted or broken store or profile, one line naming the file.
Result<ProfileForJob> find_profile_for_job(const std::filesystem::path& store, std::string_view node_type_key,
                                           const JobShape& job, bool prefer_below, uid_t caller_uid);

}  // namespace nccltune
