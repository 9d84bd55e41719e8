#include "comm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "knob_scope.h"
#include "ll128_trust.h"
#include "nvls_force.h"
#include "profile/nccl_names.h"

namespace nccltune::fake {

bool CommNodes::holds(int index) const {
  return std::binary_search(present.begin(), present.end(), index);
}

bool CommModel::has(FaultKind kind) const {
  return std::find(faults.begin(), faults.end(), kind) != faults.end();
}

int CommModel::channels_for(const AlgoProto& pair) const {
  // getAlgoInfo's channel count (src/enqueue.cc, 2.28.9): NVLS and NVLSTree take NVLS's channels;
  // NVLS across nodes (CollNet only) the fewer of the two.
  if (pair.algo == "NVLS" && nodes > 1) return std::min(channels, nvls_channels);
  if (pair.algo == "NVLS" || pair.algo == "NVLSTree") return nvls_channels;
  return channels;
}

int CommModel::default_channels_for(const AlgoProto& pair) const {
  if (pair.algo == "NVLS" && nodes > 1) return std::min(default_channels, default_nvls_channels);
  if (pair.algo == "NVLS" || pair.algo == "NVLSTree") return default_nvls_channels;
  return default_channels;
}

namespace {

constexpr long kMaxChannels = 64;  // MAXCHANNELS, src/include/device.h (2.25.1+)

// The communicator config's minCTAs and maxCTAs as envConfigOverride (src/init.cc) leaves them:
// NCCL_MIN_CTAS / NCCL_MAX_CTAS when above 0, else 1 and MAXCHANNELS; each at most MAXCHANNELS,
// and min no more than max.
std::pair<long, long> cta_bounds(const NcclEnv& env) {
  long min = 1, max = kMaxChannels;
  if (std::optional<long> value = integer_variable(env, "NCCL_MIN_CTAS"); value && *value > 0) min = *value;
  if (std::optional<long> value = integer_variable(env, "NCCL_MAX_CTAS"); value && *value > 0) max = *value;
  min = std::min(min, kMaxChannels);
  max = std::min(max, kMaxChannels);
  return {std::min(min, max), max};
}

}  // namespace

int channels_used(const FakeModel& model, const NcclEnv& env) {
  // ncclMinNchannels / ncclMaxNchannels (src/graph/connect.cc): unset leaves 0 and MAXCHANNELS;
  // below 0 is 0, below 1 is 1, above MAXCHANNELS is MAXCHANNELS.
  long min_channels = 0, max_channels = kMaxChannels;
  if (std::optional<long> min = integer_variable(env, "NCCL_MIN_NCHANNELS")) min_channels = std::clamp(*min, 0L, kMaxChannels);
  if (std::optional<long> max = integer_variable(env, "NCCL_MAX_NCHANNELS")) max_channels = std::clamp(*max, 1L, kMaxChannels);
  const auto [min_ctas, max_ctas] = cta_bounds(env);
  // ncclTopoPostset: the maximum first, then copyChannels up to the minimum.
  long channels = std::min({static_cast<long>(model.default_channels), max_channels, max_ctas});
  channels = std::max(channels, std::max(min_channels, min_ctas));
  return static_cast<int>(std::clamp(channels, 1L, kMaxChannels));
}

int nvls_channels_used(const FakeModel& model, const NcclEnv& env, const CommNodes& nodes, int nranks) {
  // The hardware: multicast support as the log model states it, else a model with NVLS or NVLSTree.
  if (!multicast_supported(model)) return 0;
  if (std::optional<long> enable = integer_variable(env, "NCCL_NVLS_ENABLE"); enable && *enable == 0) return 0;
  const int fewest = nodes.fewest_local_ranks > 0 ? nodes.fewest_local_ranks : nranks / std::max(1, nodes.count);
  // ncclNvlsInit: gpuCount < 2 from 2.28.7, gpuCount <= 2 before.
  if (fewest < (model.nccl_version >= 22807 ? 2 : 3)) return 0;
  const int sm = model.devices.front().sm;
  long channels = sm >= 100 ? (nodes.count > 1 ? 32 : 24) : 16;
  if (std::optional<long> set = integer_variable(env, "NCCL_NVLS_NCHANNELS"); set && *set > 0) channels = *set;
  const auto [min_ctas, max_ctas] = cta_bounds(env);
  return static_cast<int>(std::max(min_ctas, std::min(max_ctas, channels)));
}

double channel_scale(const FakeModel& model, int channels) {
  if (model.channel_scale.empty()) return 1;
  auto above = model.channel_scale.upper_bound(channels);
  if (above == model.channel_scale.begin()) return above->second;
  return std::prev(above)->second;
}

double busbw_factor(std::string_view op, int nranks) {
  if (nranks <= 0) return 0;
  const double n = nranks;
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return (n - 1) / n;
  if (op == "broadcast" || op == "reduce") return 1;
  return 0;
}

namespace {

// NCCL's ncclPatEnable (src/graph/tuning.cc, 2.28.9): NCCL_PAT_ENABLE (default 2) decides when
// not 2; at 2, PAT needs one GPU per node (nNodes == nRanks). The fake's GPUs are all SM >= 60
// and its network has no device offload, NCCL's two other conditions.
bool pat_enabled(const NcclEnv& env, const CommNodes& nodes, int nranks) {
  const std::optional<long> set = integer_variable(env, "NCCL_PAT_ENABLE");
  if (set && *set != 2) return *set != 0;
  return nodes.count == nranks;
}

// PAT is NCCL's algorithm for AllGather and ReduceScatter only, and with Simple only
// (ncclTopoTuneModel, src/graph/tuning.cc, 2.28.9: the cost of any other PAT cell is never set).
bool pat_runs(std::string_view op, const std::string& proto, bool enabled) {
  return enabled && (op == "all_gather" || op == "reduce_scatter") && proto == "Simple";
}

// The algorithms NCCL's cost model gives each collective a cost for (ncclTopoTuneModel,
// src/graph/tuning.cc, 2.28.9: Broadcast and Reduce run Ring only; AllGather and ReduceScatter
// Ring, PAT, NVLS and CollNetDirect; AllReduce everything but PAT), and NVLS and NVLSTree with
// Simple only. Send/recv (alltoall) has no cost table: the model's pairs stand for its timing.
bool nccl_has_cost_for(std::string_view op, const std::string& algo, const std::string& proto) {
  if ((algo == "NVLS" || algo == "NVLSTree") && proto != "Simple") return false;
  if (op == "broadcast" || op == "reduce") return algo == "Ring";
  if (op == "all_gather" || op == "reduce_scatter")
    return algo == "Ring" || algo == "PAT" || algo == "NVLS" || algo == "CollNetDirect";
  if (op == "all_reduce") return algo != "PAT";
  return true;
}

std::string setting(const NcclEnv& env, const std::string& variable) {
  const auto set = env.find(variable);
  return variable + (set == env.end() ? " unset" : "='" + set->second + "'");
}

// NCCL_MAX_NVLS_ARITY (src/include/device.h): past this many local ranks NVLS and NVLSTree run
// AllReduce only (updateCollCostTable, src/enqueue.cc).
constexpr int kMaxNvlsArity = 32;

// Whether NCCL enables `algo` for `op` on this communicator, whatever a model says
// (ncclTopoTuneModel, src/graph/tuning.cc: NVLS off on more than one node without CollNet,
// NVLSTree off on one node; both need NVLS support, ncclNvlsInit in src/transport/nvls.cc, and
// run only AllReduce on a node of more than 32 local ranks). CollNetDirect and CollNetChain
// need a CollNet network (a SHARP plugin) and NCCL_COLLNET_ENABLE=1; the fake has no CollNet
// network, so they never run, and neither does NVLS past one node.
bool nccl_enables(const std::string& algo, const CommModel& comm, std::string_view op) {
  const bool nvls = algo == "NVLS" || algo == "NVLSTree";
  if (nvls && op != "all_reduce" && comm.local_ranks > kMaxNvlsArity) return false;
  if (algo == "NVLS") return comm.nvls_channels > 0 && comm.nodes == 1;
  if (algo == "NVLSTree") return comm.nvls_channels > 0 && comm.nodes > 1;
  if (algo == "CollNetDirect" || algo == "CollNetChain") return false;
  return true;
}

std::vector<AlgoProto> allowed_pairs(const FakeModel& model, const NcclEnv& env, std::string_view op,
                                     bool pat_is_enabled, const CommModel& comm) {
  const std::optional<NameFilter> algo_filter = name_filter(env, "NCCL_ALGO", op, model.nccl_version);
  const std::optional<NameFilter> proto_filter = name_filter(env, "NCCL_PROTO", op, model.nccl_version);
  // protoEnable (tuning.cc): LL128 is 2, "on where NCCL trusts it" (ll128_trust.h), until an
  // NCCL_PROTO entry for this function sets every protocol to 0 or 1 (parseList).
  const bool ll128_on = proto_filter ? proto_filter->allows("LL128")
                                     : why_ll128_untrusted(model, env, comm.nodes, comm.local_ranks).empty();
  std::vector<AlgoProto> pairs;
  for (const auto& [algo, algo_model] : model.algos) {
    if (algo_filter && !algo_filter->allows(algo)) continue;
    if (!holds(algo_model.requires_env, env) || !nccl_enables(algo, comm, op)) continue;
    for (const auto& [proto, cost] : algo_model.protos) {
      if (!nccl_has_cost_for(op, algo, proto)) continue;
      if (algo == "PAT" && !pat_runs(op, proto, pat_is_enabled)) continue;
      if (proto == "LL128" && !ll128_on) continue;
      if (!proto_filter || proto_filter->allows(proto)) pairs.push_back({algo, proto});
    }
  }
  // Before 2.24.3 ncclTopoTuneModel gave a function that NCCL_ALGO left no algorithm Ring back,
  // with the protocols NCCL_PROTO and LL128's trust allow (`ringbdw`).
  const auto ring = model.algos.find("Ring");
  if (pairs.empty() && algo_filter && model.nccl_version < kFirstScopedListVersion &&
      ring != model.algos.end() && holds(ring->second.requires_env, env))
    for (const auto& entry : ring->second.protos) {
      const std::string& proto = entry.first;
      if (nccl_has_cost_for(op, "Ring", proto) && (proto != "LL128" || ll128_on) &&
          (!proto_filter || proto_filter->allows(proto)))
        pairs.push_back({"Ring", proto});
    }
  return pairs;
}

// Why NCCL left `op` no pair, for its error line.
std::string why_no_pair(const FakeModel& model, const NcclEnv& env, const CommModel& comm, std::string_view op) {
  std::string why = setting(env, "NCCL_ALGO") + ", " + setting(env, "NCCL_PROTO") + ", and each algorithm's `requires`";
  const bool wide = op != "all_reduce" && comm.local_ranks > kMaxNvlsArity;
  if (wide && (model.algos.contains("NVLS") || model.algos.contains("NVLSTree")))
    why += "; NVLS and NVLSTree run AllReduce only past " + std::to_string(kMaxNvlsArity) + " local ranks";
  else if (model.algos.contains("NVLS") && !nccl_enables("NVLS", comm, op))
    why += comm.nodes > 1 ? "; NVLS runs on one node only" : "; no NVLS support (NCCL_NVLS_ENABLE=0 or 1 GPU)";
  if (!wide && model.algos.contains("NVLSTree") && !nccl_enables("NVLSTree", comm, op))
    why += comm.nodes == 1 ? "; NVLSTree runs on 2+ nodes only" : "; no NVLS support for NVLSTree";
  if (model.algos.contains("CollNetDirect") || model.algos.contains("CollNetChain"))
    why += "; no CollNet network (CollNet algorithms off)";
  return why;
}

// Whether a fault that held for its `when` and `rank` holds on this rank's communicator. A
// collective ends for all ranks when the slowest is done, so slow_node and slow_link slow every
// rank of a communicator that uses the slow hardware, not only the ranks on it.
bool holds_on_nodes(const Fault& fault, const CommNodes& nodes) {
  switch (fault.kind) {
    case FaultKind::slow_node:
      if (fault.node && !nodes.holds(*fault.node)) return false;
      if (fault.path == FaultPath::network) return nodes.count > 1;
      if (fault.path == FaultPath::local) return nodes.count == 1;
      return true;
    case FaultKind::slow_link:
      return fault.link && nodes.holds(fault.link->first) && nodes.holds(fault.link->second);
    default: return !fault.node || *fault.node == nodes.node;
  }
}

constexpr const char* kAlgo = "NCCL_ALGO";
constexpr const char* kProto = "NCCL_PROTO";

// A `corrupt` fault's NCCL_ALGO / NCCL_PROTO part, when it names pairs (no `null` for unset) and
// `op` is a collective NCCL asks its cost model (and a tuner plugin) about: those are read against
// the pair that runs, the rest of `when` against the environment. Send/recv (alltoall) has no
// cost table: there the whole `when` is read against the environment.
std::optional<Condition> pair_part(const Fault& fault, std::string_view op) {
  if (fault.kind != FaultKind::corrupt || op == "alltoall") return std::nullopt;
  Condition part;
  for (const char* variable : {kAlgo, kProto}) {
    const auto named = fault.when.find(variable);
    if (named == fault.when.end()) continue;
    for (const auto& value : named->second)
      if (!value) return std::nullopt;
    part.insert(*named);
  }
  if (part.empty()) return std::nullopt;
  return part;
}

// A pair's place in NCCL's cost table (ncclAlgoStr, ncclProtoStr order): ties go to the first.
std::size_t nccl_order(const AlgoProto& pair) {
  const auto index = [](const auto& names, const std::string& name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  return index(kNcclAlgorithms, pair.algo) * kNcclProtocols.size() + index(kNcclProtocols, pair.proto);
}

}  // namespace

bool corrupts(const CommModel& comm, const AlgoProto& pair) {
  if (comm.has(FaultKind::corrupt)) return true;
  const NcclEnv running{{kAlgo, pair.algo}, {kProto, pair.proto}};
  return std::any_of(comm.corrupting_pairs.begin(), comm.corrupting_pairs.end(),
                     [&](const Condition& names) { return holds(names, running); });
}

Result<CommModel> resolve_comm_model(const FakeModel& model, const NcclEnv& env, int rank, int nranks,
                                     std::string_view op, const CommNodes& nodes) {
  CommModel comm;
  comm.rank = rank;
  comm.nranks = nranks;
  comm.channels = channels_used(model, env);
  comm.channel_scale = channel_scale(model, comm.channels);
  comm.nvls_channels = nvls_channels_used(model, env, nodes, nranks);
  comm.nodes = nodes.count;
  comm.default_channels = channels_used(model, {});
  comm.default_nvls_channels = nvls_channels_used(model, {}, nodes, nranks);
  comm.threads = thread_counts(env);
  comm.nccl_version = model.nccl_version;
  comm.local_ranks = nodes.local_ranks > 0 ? nodes.local_ranks : nranks / std::max(1, nodes.count);
  for (const Effect& effect : model.effects) {
    if (!holds(effect.when, env)) continue;
    // Only where NCCL lets the effect's variables act (IB-only, GDR, per-protocol variables).
    const std::optional<Effect> acts = effect_as_nccl_acts(effect, model.nccl_log, nodes.count);
    if (!acts) continue;
    if (acts->scoped()) {
      comm.algo_effects.push_back(*acts);
      continue;
    }
    comm.busbw_scale *= acts->busbw_scale;
    comm.lat_scale *= acts->lat_scale;
  }
  comm.allowed = allowed_pairs(model, env, op, pat_enabled(env, nodes, nranks), comm);
  if (comm.allowed.empty()) {
    comm.no_pair = why_no_pair(model, env, comm, op);
    comm.no_pair_by_list = env.count(kAlgo) > 0 || env.count(kProto) > 0;
  }
  for (const Fault& fault : model.faults) {
    if ((fault.rank && *fault.rank != rank) || !holds_on_nodes(fault, nodes)) continue;
    if (const std::optional<Condition> pairs = pair_part(fault, op)) {
      Condition rest = fault.when;
      for (const auto& [variable, values] : *pairs) rest.erase(variable);
      if (holds(rest, env)) comm.corrupting_pairs.push_back(*pairs);
      continue;
    }
    if (!holds(fault.when, env)) continue;
    comm.faults.push_back(fault.kind);
    if (only_slows(fault.kind)) comm.slow_factor *= fault.factor;
  }
  return comm;
}

PairCost pair_cost(const FakeModel& model, const CommModel& comm, const AlgoProto& pair, std::string_view op,
                   int channels) {
  const ProtoCost& cost = model.algos.at(pair.algo).protos.at(pair.proto);
  const int runs_on = channels > 0 ? std::min(channels, comm.channels_for(pair)) : comm.channels_for(pair);
  const double scale = runs_on == comm.channels ? comm.channel_scale : channel_scale(model, runs_on);
  double busbw_scale = comm.busbw_scale;
  double lat_scale = comm.lat_scale;
  const auto contains = [](const std::vector<std::string>& names, const std::string& name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const Effect& effect : comm.algo_effects)
    if ((!effect.algo || effect.algo == pair.algo) && contains(effect.algos, pair.algo) &&
        contains(effect.protos, pair.proto)) {
      busbw_scale *= effect.busbw_scale;
      lat_scale *= effect.lat_scale;
    }
  const double factor = busbw_factor(op, comm.nranks);
  const double algbw_gbps = factor > 0 ? cost.busbw_gbps * scale * busbw_scale / factor : 0;
  return {cost.lat_us * lat_scale, algbw_gbps};
}

std::optional<PairCost> nccl_pair_cost(const FakeModel& model, const CommModel& comm, const AlgoProto& pair,
                                       std::string_view op) {
  const auto algo = model.nccl_model.find(pair.algo);
  if (algo == model.nccl_model.end()) return std::nullopt;
  const auto proto = algo->second.protos.find(pair.proto);
  if (proto == algo->second.protos.end()) return std::nullopt;
  const double factor = busbw_factor(op, comm.nranks);
  return PairCost{proto->second.lat_us, factor > 0 ? proto->second.busbw_gbps / factor : 0};
}

double cost_time_us(const PairCost& cost, double bytes) {
  if (cost.algbw_gbps <= 0) return cost.lat_us;
  return cost.lat_us + bytes / (cost.algbw_gbps * 1e9) * 1e6;
}

int op_channels(const CommModel& comm, const AlgoProto& pair, std::string_view op, double bytes,
                int plugin_channels) {
  const int may_use = plugin_channels > 0 ? std::min(plugin_channels, comm.channels_for(pair)) : comm.channels_for(pair);
  const SizedOp sized{pair.algo, pair.proto, op, bytes, comm.nranks, comm.nccl_version};
  return channels_at_size(sized, may_use, comm.threads, plugin_channels > 0);
}

double pair_time_us(const FakeModel& model, const CommModel& comm, const AlgoProto& pair, std::string_view op,
                    double bytes, int channels) {
  PairCost cost = pair_cost(model, comm, pair, op, channels);
  // pair_cost scales by the channels the pair may use; NCCL uses fewer for small sizes, and the
  // model's bandwidth is what its defaults reach at each size.
  const int may_use = channels > 0 ? std::min(channels, comm.channels_for(pair)) : comm.channels_for(pair);
  const int by_default = comm.default_channels_for(pair) > 0 ? comm.default_channels_for(pair) : may_use;
  // Timed at the default thread count: fewer threads per channel (NCCL_NTHREADS) let a small size
  // spread over more channels, but not move more bytes (channels x threads is what the size fills).
  const SizedOp sized{pair.algo, pair.proto, op, bytes, comm.nranks, comm.nccl_version};
  const int used = channels_at_size(sized, may_use, ThreadCounts{}, channels > 0);
  const int used_by_default = channels_at_size(sized, by_default, ThreadCounts{});
  if (used != may_use || used_by_default != by_default)
    cost.algbw_gbps *= channel_scale(model, used) * channel_scale(model, by_default) /
                       (channel_scale(model, used_by_default) * channel_scale(model, may_use));
  return cost_time_us(cost, bytes);
}

AlgoProto choose_algo_proto(const FakeModel& model, const CommModel& comm, std::string_view op,
                            double bytes) {
  if (!model.nccl_model.empty()) {
    // topoGetAlgoInfo (src/enqueue.cc): the cheapest cell of NCCL's cost table, first on ties in
    // NCCL's algorithm order; pairs its model does not rate are never its choice.
    const AlgoProto* cheapest = nullptr;
    double cheapest_time = std::numeric_limits<double>::infinity();
    for (const AlgoProto& pair : comm.allowed) {
      const std::optional<PairCost> cost = nccl_pair_cost(model, comm, pair, op);
      if (!cost) continue;
      const double time = cost_time_us(*cost, bytes);
      if (time < cheapest_time || (time == cheapest_time && nccl_order(pair) < nccl_order(*cheapest))) {
        cheapest = &pair;
        cheapest_time = time;
      }
    }
    return cheapest ? *cheapest : comm.allowed.front();
  }
  // NCCL reads NCCL_ALGO / NCCL_PROTO as a filter (parseList in src/graph/tuning.cc zeroes the
  // bandwidth of what they leave out) and its cost model still picks the cheapest enabled pair
  // (topoGetAlgoInfo in src/enqueue.cc). The model's `default` stands for that pick, so a list
  // that still allows it changes nothing.
  for (const DefaultChoice& choice : model.defaults) {
    if (choice.max_bytes && bytes > static_cast<double>(*choice.max_bytes)) continue;
    const AlgoProto pair{choice.algo, choice.proto};
    if (std::find(comm.allowed.begin(), comm.allowed.end(), pair) != comm.allowed.end()) return pair;
    break;  // excluded by a list or its `requires`: NCCL picks among the rest
  }
  // Standing in for NCCL's cost model once its own choice is excluded: the fastest allowed pair.
  const AlgoProto* fastest = &comm.allowed.front();
  double fastest_time = std::numeric_limits<double>::infinity();
  for (const AlgoProto& pair : comm.allowed) {
    const double time = pair_time_us(model, comm, pair, op, bytes);
    // Ties go to the first in NCCL's row order, as its strict `<` over the cost table.
    if (time < fastest_time || (time == fastest_time && nccl_order(pair) < nccl_order(*fastest))) {
      fastest = &pair;
      fastest_time = time;
    }
  }
  return *fastest;
}

double pair_op_time_us(const FakeModel& model, const CommModel& comm, const AlgoProto& pair,
                       std::string_view op, double bytes, int channels) {
  return pair_time_us(model, comm, pair, op, bytes, channels) * comm.slow_factor;
}

double op_time_us(const FakeModel& model, const CommModel& comm, std::string_view op, double bytes) {
  return pair_op_time_us(model, comm, choose_algo_proto(model, comm, op, bytes), op, bytes);
}

bool nvls_reduces(std::string_view collective, nccl_abi::ncclRedOp_t op, nccl_abi::ncclDataType_t type) {
  using namespace nccl_abi;
  if (collective == "all_gather" || collective == "broadcast") return true;
  switch (type) {
    case ncclInt32: case ncclUint32: case ncclInt64: case ncclUint64: case ncclFloat16: case ncclBfloat16:
      return op == ncclSum || op == ncclMax || op == ncclMin;
    case ncclFloat32: case ncclFloat64: return op == ncclSum;
    default: return false;
  }
}

bool pat_reduces(std::string_view collective, nccl_abi::ncclRedOp_t op) {
  return !(collective == "reduce_scatter" && op == nccl_abi::ncclAvg);
}

NoiseSource::NoiseSource(const Noise& noise, int rank)
    : cv_(noise.cv), state_(noise.seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(rank)) {}

uint64_t NoiseSource::next_bits() {  // splitmix64
  uint64_t x = (state_ += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double NoiseSource::next_factor() {
  if (cv_ == 0) return 1;
  // Box-Muller from two uniforms in (0, 1].
  const double u1 = (static_cast<double>(next_bits() >> 11) + 1) * 0x1.0p-53;
  const double u2 = static_cast<double>(next_bits() >> 11) * 0x1.0p-53;
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  return std::max(0.01, 1 + cv_ * z);
}

}  // namespace nccltune::fake
