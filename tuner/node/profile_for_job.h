// The one rule for which stored profile a job or a communicator gets, for `nccltune env`, the
// tuner plugin and nccltuned alike: the store's file for this node type and the job's node count;
// for a count that was not measured, the measured counts around it under the serving rule
// (node_count_rule.h); each file trusted and checked (load_matched_profile), and used only when it
// was tuned with the job's GPUs per node (profile_fits_job).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
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

// A job's profile: with job.hosts (an MNNVL job), among the MNNVL profiles of its layout
// (<nodes>n<hosts>h.yaml with hosts / nodes hosts per NVLink domain); else among the host-counted
// ones (<nodes>n.yaml). Errors: an untrusted or broken store or profile, one line naming the
// file. `parts`: what of the profiles is read (parse_profile); env, nccltune-env and the plugin
// need only the job's.
Result<ProfileForJob> find_profile_for_job(const std::filesystem::path& store, std::string_view node_type_key,
                                           const JobShape& job, bool prefer_below, uid_t caller_uid,
                                           ProfileParts parts = ProfileParts::whole);

// A communicator's profile (the tuner plugin): it knows NCCL's node count and ranks per node, not
// its hosts, so every layout of the node type is weighed, the first that serves it winning:
// 1. the host-counted <nodes>n.yaml whose world has the communicator's ranks per node;
// 2. an MNNVL <nodes>n<H>h.yaml whose world has them (16 ranks on 1 node: 1n4h.yaml, a domain of
//    4 hosts x 4 GPUs), the fewest hosts per domain first;
// 3. <nodes>n.yaml, then each <nodes>n<H>h.yaml, that measured a section of the communicator's
//    shape (`measured_apart`: a rail, a node);
// 4. without an exact count: the serving rule among the profiles of one layout whose world has
//    the communicator's ranks per node (host-counted first, then MNNVL by hosts per domain);
//    layouts are never mixed;
// 5. else, not fitting (for the line that says why): what the host-counted lookup found, else the
//    first MNNVL profile of the communicator's node count.
Result<ProfileForJob> find_profile_for_communicator(const std::filesystem::path& store,
                                                    std::string_view node_type_key, const JobShape& job,
                                                    const std::function<bool(const Profile&)>& measured_apart,
                                                    bool prefer_below, uid_t caller_uid,
                                                    ProfileParts parts = ProfileParts::whole);

}  // namespace nccltune
