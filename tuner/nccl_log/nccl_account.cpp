#include "nccl_log/nccl_account.h"

#include <algorithm>

#include "nccl_log/nccl_log_verdicts.h"
#include "nccl_log/nccl_observation.h"
#include "profile/comm_shape.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

// The collectives `profile` tuned (nccl-tests names): not the guards.
std::vector<std::string> tuned_collectives(const Profile& profile) {
  std::vector<std::string> ops;
  for (const auto& [op, collective] : profile.collectives)
    if (!collective.guard) ops.push_back(op);
  return ops;
}

// Each split communicator's account, in the worker's order (rail, node, then any other): its facts
// under the defaults and the shipped env, and explain's verdicts on the latter's log (else the
// defaults'), which judge the shape by what NCCL can do there (no NVLS on one GPU per node).
std::vector<CommObserved> comms_observed(const NcclAccount& account, const Env& shipped_env) {
  std::vector<std::string> roles;
  for (const auto& [env, by_role] : account.comm_logs)
    for (const auto& [role, reader] : by_role)
      if (std::find(roles.begin(), roles.end(), role) == roles.end()) roles.push_back(role);
  const auto rank = [](const std::string& role) {
    const std::optional<CommRole> known = parse_comm_role(role);
    return known ? static_cast<int>(*known) : static_cast<int>(kCommRoles.size());
  };
  std::stable_sort(roles.begin(), roles.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  std::vector<CommObserved> out;
  for (const std::string& role : roles) {
    CommObserved comm{role, {}, {}, {}};
    std::optional<NcclInfoLog> judged;
    const auto read = [&](const Env& env) -> std::optional<NcclObservation> {
      const auto by_role = account.comm_logs.find(env);
      if (by_role == account.comm_logs.end()) return std::nullopt;
      const auto it = by_role->second.find(role);
      if (it == by_role->second.end()) return std::nullopt;
      NcclInfoLog log = it->second.result();
      if (log.nccl_lines == 0) return std::nullopt;
      log.choices.clear();  // the calls' lines name no communicator: the world holds them
      judged = log;
      return observation_from_log(log);
    };
    comm.defaults = read(Env{});
    if (!shipped_env.empty()) comm.shipped = read(shipped_env);
    if (!judged) continue;
    std::vector<LogVerdict> verdicts = explain_nccl_log(*judged, account.node ? &*account.node : nullptr);
    std::erase_if(verdicts, [](const LogVerdict& v) { return v.check == "env"; });
    comm.verdicts = observed_verdicts(verdicts);
    out.push_back(std::move(comm));
  }
  return out;
}

}  // namespace

std::string comm_role_of_log(const NcclInfoLog& log) {
  // NCCL checks MNNVL only for a communicator of several hosts: one host's ranks never say MNNVL 1,
  // a rail inside NVLink domains does (its domains are its nodes).
  const bool mnnvl = log.mnnvl.value_or(false);
  if (log.nodes == 1 && !mnnvl) return "node";
  if (log.local_ranks == 1 || mnnvl) return "rail";
  return "ranks " + std::to_string(log.ranks.value_or(0)) + " on " + std::to_string(log.nodes.value_or(0)) +
         " nodes";
}

NcclInfoLog NcclAccount::add(const Env& env, const std::vector<NcclInfoLog>& node_logs) {
  int world_ranks = 0;
  for (const NcclInfoLog& summary : node_logs) world_ranks = std::max(world_ranks, summary.ranks.value_or(0));
  NcclInfoLogReader& reader = logs[env];
  NcclInfoLogReader this_trial;
  for (const NcclInfoLog& summary : node_logs) {
    if (summary.ranks && *summary.ranks < world_ranks) {
      comm_logs[env][comm_role_of_log(summary)].add(summary);
      continue;
    }
    reader.add(summary);
    this_trial.add(summary);
  }
  return this_trial.result();
}

NcclObserved nccl_observed(const NcclAccount& account, const Profile& profile) {
  NcclObserved observed;
  std::optional<NcclInfoLog> jobs_log;
  const auto read = [&](const Env& env) -> std::optional<NcclObservation> {
    const auto it = account.logs.find(env);
    if (it == account.logs.end()) return std::nullopt;
    NcclInfoLog log = account.split_comms ? one_choice_per_size(it->second.result()) : it->second.result();
    if (log.nccl_lines == 0) return std::nullopt;
    if (env.empty() && !log.model_tables.empty())
      observed.nccl_model = nccl_model_of(log.model_tables.front(), tuned_collectives(profile));
    jobs_log = std::move(log);
    return observation_from_log(*jobs_log);
  };
  observed.defaults = read(Env{});
  if (!profile.env.empty()) observed.shipped = read(profile.env);
  if (!jobs_log) return observed;
  std::vector<LogVerdict> verdicts = explain_nccl_log(*jobs_log, account.node ? &*account.node : nullptr);
  std::erase_if(verdicts, [](const LogVerdict& v) { return v.check == "env"; });
  observed.verdicts = observed_verdicts(verdicts);
  for (const auto& [op, collective] : profile.collectives) {
    const std::optional<std::string_view> logged = nccl_log_op_name(op);
    if (!logged || collective.guard) continue;
    for (ChoiceContradiction& c : choice_contradictions(*jobs_observation(observed), *logged,
                                                        collective.per_size, collective.measured))
      observed.contradictions.push_back(std::move(c));
  }
  observed.comms = comms_observed(account, profile.env);
  return observed;
}

}  // namespace nccltune
