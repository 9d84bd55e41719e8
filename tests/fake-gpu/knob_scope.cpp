#include "knob_scope.h"

#include <algorithm>
#include <array>

namespace nccltune::fake {

namespace {

struct ScopedVariable {
  std::string_view name;
  PairScope scope;
};

// NCCL_NTHREADS sets Ring's and Tree's Simple and LL thread counts (ncclTopoTuneModel), but
// topoGetAlgoInfo runs Tree (and PAT) with NCCL_MAX_NTHREADS always: its threads act on Ring only
// (on Tree it moves only the per-size channel count, channel_rules.h). NCCL_LL128_NTHREADS the
// same for LL128. Each buffer size variable sizes its protocol's buffers (computeBuffSizes).
const std::array<ScopedVariable, 5>& scoped_variables() {
  static const std::array<ScopedVariable, 5> variables = {{
      {"NCCL_NTHREADS", {{"Ring"}, {"LL", "Simple"}}},
      {"NCCL_LL128_NTHREADS", {{"Ring"}, {"LL128"}}},
      {"NCCL_BUFFSIZE", {{}, {"Simple"}}},
      {"NCCL_LL_BUFFSIZE", {{}, {"LL"}}},
      {"NCCL_LL128_BUFFSIZE", {{}, {"LL128"}}},
  }};
  return variables;
}

// `current` narrowed to `allowed` (empty: any): what both let through. Returns false when
// nothing is left.
bool narrow(std::vector<std::string>& current, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  if (current.empty()) {
    current = allowed;
    return true;
  }
  std::erase_if(current, [&](const std::string& name) {
    return std::find(allowed.begin(), allowed.end(), name) == allowed.end();
  });
  return !current.empty();
}

// Whether `when` sets `variable`: it names it, and unset is not one of its values (an effect
// that also holds with the variable unset describes NCCL's default, which acts everywhere).
bool sets(const Condition& when, const std::string& variable) {
  const auto named = when.find(variable);
  return named != when.end() &&
         std::none_of(named->second.begin(), named->second.end(),
                      [](const std::optional<std::string>& value) { return !value; });
}

}  // namespace

// Every NCCL_IB_* NCCL_PARAM and ncclGetEnv is the IB transport's, at 2.28.9 (net_ib.cc,
// ibvwrap.cc) and 2.30.7 (net_ib/common.cc, connect.cc, init.cc, p2p.cc, p2p_resiliency*.cc), and
// so is NCCL_GDR_FLUSH_DISABLE (IbGdrFlushDisable): the prefix is the rule, as nccltune's search
// prunes by it (search/nccl_acts.cpp).
bool is_ib_transport_variable(std::string_view name) {
  return name.starts_with("NCCL_IB_") || name == "NCCL_GDR_FLUSH_DISABLE";
}

bool is_gdr_variable(std::string_view name) {
  return name == "NCCL_NET_GDR_LEVEL" || name == "NCCL_NET_GDR_READ" || name == "NCCL_NET_GDR_C2C" ||
         name.starts_with("NCCL_GDRCOPY_");
}

std::optional<PairScope> nccl_pair_scope(std::string_view variable) {
  for (const ScopedVariable& scoped : scoped_variables())
    if (scoped.name == variable) return scoped.scope;
  return std::nullopt;
}

std::optional<Effect> effect_as_nccl_acts(const Effect& effect, const NcclLogModel& log, int nodes) {
  Effect acts = effect;
  const bool ib_network = log.transport == NcclTransport::ib || log.transport == NcclTransport::roce;
  for (const auto& [variable, values] : effect.when) {
    if (!sets(effect.when, variable)) continue;
    if (is_ib_transport_variable(variable) && (!ib_network || nodes <= 1)) return std::nullopt;
    if (is_gdr_variable(variable) && !log.gdr) return std::nullopt;
    const std::optional<PairScope> scope = nccl_pair_scope(variable);
    if (!scope) continue;
    if (!narrow(acts.algos, scope->algos) || !narrow(acts.protos, scope->protos)) return std::nullopt;
    if (acts.algo && !scope->algos.empty() &&
        std::find(scope->algos.begin(), scope->algos.end(), *acts.algo) == scope->algos.end())
      return std::nullopt;
  }
  return acts;
}

}  // namespace nccltune::fake
