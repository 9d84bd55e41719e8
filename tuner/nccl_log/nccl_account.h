// NCCL's own account of a tune run: what its logs said in the trials that showed them, one
// summary per node (each node's first rank reads its ranks' logs), by the env they ran under
// (the defaults' is the empty env), and the node explain's verdicts compare it with; and what
// the profile keeps of it (profile/nccl_observed.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "profile/nccl_observed.h"
#include "profile/profile.h"
#include "topology/node_topology.h"

namespace nccltune {

struct NcclAccount {
  // The world's: what the profile's account, jobs and the daemon get.
  std::map<Env, NcclInfoLogReader> logs;
  // Each split communicator's, by env and role ("rail", "node"): kept apart, so that a rail (one
  // GPU per node, where NCCL cannot run NVLS) does not make the world's NVLS look unavailable.
  std::map<Env, std::map<std::string, NcclInfoLogReader>> comm_logs;
  std::optional<NodeTopology> node;
  // Some trial measured split communicators beside the world: their TUNING lines are mixed with
  // the world's, so a size with two choices tells nothing (one_choice_per_size).
  bool split_comms = false;

  // Adds one trial's logs (one summary per node and communicator shape, node_log_summary.h);
  // returns what the world's say of that trial alone. The world's summaries are those with the
  // most ranks (and those that name no shape); of the others, one of one node is a "node", one of
  // one rank per node a "rail" (comm_role_of_log).
  NcclInfoLog add(const Env& env, const std::vector<NcclInfoLog>& node_logs);
};

// The role a split communicator's log shows (its comm line's nodes and ranks per node): "node" on
// one node without MNNVL, "rail" with one rank per node or with MNNVL (one rank per host in NVLink
// domains), else "ranks N on M nodes".
std::string comm_role_of_log(const NcclInfoLog& log);

// What NCCL's log said under the defaults and under the env `profile` ships, explain's verdicts on
// the latter (without the "forced settings" ones: the shipped NCCL_ALGO / NCCL_PROTO are tune's
// own choice), where NCCL's own choice there is not per_size's, and NCCL's model of the tuned
// collectives (the first tuning table under the defaults). A log without a line of
// NCCL's (NCCL printed nothing, or the trials came from the journal) records nothing.
NcclObserved nccl_observed(const NcclAccount& account, const Profile& profile);

}  // namespace nccltune
