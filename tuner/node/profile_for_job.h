// The one rule for which stored profile a job or a communicator gets, for `nccltune env`, the
// tuner plugin and nccltuned alike: the store's file for this node type and the job's node count;
// for a count that was not measured, the measured counts around it under the serving rule
// (node_count_rule.h); each file trusted and checked (load_matched_profile), and used only when it
// was tuned with the job's GPUs per node (profile_fits_job).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string_view>

#include "base/result.h"
#include "node/job_shape.h"
#include "profile/node_count_rule.h"
#include "profile/profile_store.h"

namespace nccltune {

struct ProfileForJob {
  // The nearest (or exact) stored profile; nullopt: the store has nothing for this key and count.
  std::optional<StoreProfile> stored;
  bool fits = false;  // stored, and tuned with the job's GPUs per node: use it
  // What the job gets: the stored profile itself for a measured count, else the serving rule's.
  ServedProfile served;

  const Profile* profile() const { return fits ? &served.profile : nullptr; }
};

// Errors: an untrusted or broken store or profile, one line naming the file. `parts`: what of
// the profiles is read (parse_profile); env, nccltune-env and the plugin need only the job's.
Result<ProfileForJob> find_profile_for_job(const std::filesystem::path& store, std::string_view node_type_key,
                                           const JobShape& job, bool prefer_below, uid_t caller_uid,
                                           ProfileParts parts = ProfileParts::whole);

}  // namespace nccltune
