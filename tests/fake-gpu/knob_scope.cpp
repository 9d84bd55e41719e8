#include "knob_scope.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace nccltune::fake {

namespace {

// Every NCCL_IB_* NCCL_PARAM and ncclGetEnv of the IB transport at 2.28.9 (net_ib.cc) and 2.30.7
// (net_ib/common.cc, connect.cc, init.cc, p2p.cc, p2p_resiliency*.cc), and NCCL_GDR_FLUSH_DISABLE,
// which the IB transport reads too (IbGdrFlushDisable). The one list the fake and its tests use.
constexpr std::string_view kIbTransportVariables[] = {
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_DATA_DIRECT",
    "NCCL_IB_DEVICE_PCI_ORDER",
    "NCCL_IB_DISABLE",
    "NCCL_IB_ECE_ENABLE",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_HCA",
    "NCCL_IB_MERGE_NICS",
    "NCCL_IB_MERGE_VFS",
    "NCCL_IB_OOO_RQ",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_PKEY",
    "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_RETURN_ASYNC_EVENTS",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
    "NCCL_IB_SL",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_SUBNET_AWARE_ROUTING",
    "NCCL_IB_SUBNET_PREFIX_LEN",
    "NCCL_IB_TC",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_USE_INLINE",
    "NCCL_IB_WARN_RAIL_LOCAL",
    "NCCL_GDR_FLUSH_DISABLE",
    "NCCL_IB_MQP_RETRY_ALL",  // ibvwrap.cc: the verbs wrapper the IB transport calls
    "NCCL_IB_MQP_RETRY_CNT",
};

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

bool is_ib_transport_variable(std::string_view name) {
  return std::find(std::begin(kIbTransportVariables), std::end(kIbTransportVariables), name) !=
         std::end(kIbTransportVariables);
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
