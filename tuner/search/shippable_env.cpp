#include "search/shippable_env.h"

#include <algorithm>

#include "base/byte_size.h"
#include "base/collective_names.h"
#include "profile/nccl_names.h"
#include "search/nccl_acts.h"

namespace nccltune {

namespace {

constexpr const char* kAlgoVariable = "NCCL_ALGO";
constexpr const char* kProtoVariable = "NCCL_PROTO";

// Why `variable`'s value in `env` may not ship, or "" when it may. Each rule holds for every tuned
// collective: a list scoped to one ("allgather:Ring") is read for that one, a plain list for all.
std::string why_not_shippable(const Env& env, const std::string& variable, const ShipFacts& facts) {
  const std::string largest = format_byte_size(facts.largest_measured);
  if (variable == kAlgoVariable && facts.empty_filter_fails)
    for (const CollectiveName& row : kCollectiveTable)  // NCCL's functions: alltoall has none
      if (const std::string op(row.name); !row.function.empty() &&
          std::find(facts.collectives.begin(), facts.collectives.end(), op) == facts.collectives.end() &&
          !env_allows(env, kAlgoVariable, "Ring", op))
        return "it leaves " + op +
               ", which was not tuned, without Ring, and NCCL 2.24+ fails a collective with no algorithm";
  for (const std::string& op : facts.collectives) {
    const std::string of_op = facts.collectives.size() > 1 ? " for " + op : "";
    for (const NcclChoice& pair : facts.corrupt_pairs)
      if (env_allows(env, kAlgoVariable, pair.algo, op) && env_allows(env, kProtoVariable, pair.proto, op))
        return "it lets NCCL choose " + pair.algo + "/" + pair.proto + of_op +
               ", which gave wrong data when a trial forced it";
    const auto used_by_default = facts.default_at_largest.find(op);
    if (used_by_default == facts.default_at_largest.end())
      return "NCCL's own choice" + of_op + " at the largest measured size (" + largest +
             ") is unknown, so it cannot be shown to keep it";
    const std::string& used =
        variable == kAlgoVariable ? used_by_default->second.algo : used_by_default->second.proto;
    if (!env_allows(env, variable, used, op))
      return "it removes " + used + ", which NCCL's defaults use" + of_op +
             " at the largest measured size (" + largest + ")";
    if (variable == kProtoVariable && facts.largest_measured < kSimpleProvenFromBytes &&
        !env_allows(env, kProtoVariable, "Simple", op))
      return "it removes Simple" + of_op + ", and no size of at least " +
             format_byte_size(kSimpleProvenFromBytes) + " was measured (the largest was " + largest + ")";
  }
  return "";
}

}  // namespace

bool env_allows(const Env& env, const std::string& variable, const std::string& name, const std::string& op) {
  const auto it = env.find(variable);
  return it == env.end() || nccl_list_allows(it->second, name, op);
}

std::vector<NcclChoice> corrupt_pairs(const std::vector<FailedTrial>& failed) {
  std::vector<NcclChoice> pairs;
  const auto single = [](const Env& env, const char* variable) -> std::optional<std::string> {
    const auto it = env.find(variable);
    if (it == env.end() || it->second.find_first_of(",^") != std::string::npos) return std::nullopt;
    return it->second;
  };
  for (const FailedTrial& trial : failed) {
    const auto algo = single(trial.env, kAlgoVariable), proto = single(trial.env, kProtoVariable);
    if (trial.outcome == TrialOutcome::wrong_data && algo && proto) pairs.push_back({*algo, *proto});
  }
  return pairs;
}

ShippableEnv shippable_env(const Env& env, const ShipFacts& facts) {
  ShippableEnv result{env, {}};
  if (const auto nvls = env.find("NCCL_NVLS_ENABLE"); nvls != env.end() && forces_nvls(nvls->second)) {
    result.env.erase(nvls->first);
    result.notes.push_back("NCCL_NVLS_ENABLE=" + nvls->second +
                           " is not in env: it forces NVLS without NCCL's multicast check, and init fails on any "
                           "node without multicast; 2, NCCL's default, uses NVLS wherever it can run");
  }
  for (const std::string variable : {kAlgoVariable, kProtoVariable}) {
    const auto it = env.find(variable);
    if (it == env.end()) continue;
    const std::string why = why_not_shippable(env, variable, facts);
    if (why.empty()) continue;
    result.env.erase(variable);
    result.notes.push_back(variable + "=" + it->second + " is not in env (it would apply to every size): " +
                           why + "; its per-size choices stay in per_size, for the tuner plugin");
  }
  return result;
}

}  // namespace nccltune
