#include "nccl_log/nccl_account.h"

#include "nccl_log/nccl_log_verdicts.h"
#include "nccl_log/nccl_observation.h"
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

}  // namespace

NcclInfoLog NcclAccount::add(const Env& env, const std::vector<NcclInfoLog>& node_logs) {
  NcclInfoLogReader& reader = logs[env];
  NcclInfoLogReader this_trial;
  for (const NcclInfoLog& summary : node_logs) {
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
  return observed;
}

}  // namespace nccltune
