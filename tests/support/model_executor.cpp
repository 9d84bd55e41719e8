#include "model_executor.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <set>
#include <utility>

#include "comm_model.h"
#include "nccl_env.h"

namespace nccltune::test_support {
namespace {

// The NCCL_* snapshot as the fake NCCL takes it at init: from an environ-style array.
fake::NcclEnv nccl_env(const Env& env) {
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [name, value] : env) entries.push_back(name + "=" + value);
  std::vector<const char*> environment;
  environment.reserve(entries.size() + 1);
  for (const auto& entry : entries) environment.push_back(entry.c_str());
  environment.push_back(nullptr);
  return fake::read_nccl_env(environment.data());
}

// The communicator's nodes as the fake NCCL counts them, for a model resolved for its node count
// (model_for_nodes): consecutive equal blocks of ranks, as tune's emulated nodes.
fake::CommNodes comm_nodes(const fake::FakeModel& model, int nranks) {
  fake::CommNodes nodes;
  nodes.count = std::max(1, model.for_nodes);
  nodes.present.clear();
  for (int node = 0; node < nodes.count; ++node) nodes.present.push_back(node);
  nodes.fewest_local_ranks = nranks / nodes.count;
  return nodes;
}

struct Ranks {
  std::vector<fake::CommModel> comms;  // one per rank
  std::optional<TrialOutcome> fault;
  std::string reason;
};

// Every rank's communicator; the first fault in the order the trial runner meets them:
// init (init_error), the first op (crash, hang), the data check (corrupt).
// every_rank false: only the distinct communicators (enough for noiseless times and faults).
Ranks resolve_ranks(const fake::FakeModel& model, const Env& env, int nranks, bool every_rank = true,
                    const std::string& op = kAllReduce) {
  Ranks ranks;
  const fake::NcclEnv snapshot = nccl_env(env);
  const std::string settings = describe_env(env);
  int worst = 0;  // 4 init_error, 3 crash, 2 hang, 1 corrupt
  // Ranks differ only by the faults given a `rank`: the others share one resolved communicator.
  std::set<int> distinct;
  for (const auto& fault : model.faults)
    if (fault.rank && *fault.rank >= 0 && *fault.rank < nranks) distinct.insert(*fault.rank);
  std::optional<fake::CommModel> shared;
  for (int rank = 0; rank < nranks; ++rank) {
    Result<fake::CommModel> comm = Error{""};
    if (distinct.count(rank) || !shared) {
      comm = fake::resolve_comm_model(model, snapshot, rank, nranks, op, comm_nodes(model, nranks));
      if (comm && !distinct.count(rank)) shared = *comm;
    } else {
      if (!every_rank) continue;
      comm = *shared;
      comm->rank = rank;
    }
    if (!comm) {
      ranks.fault = TrialOutcome::init_error;
      ranks.reason = "ncclCommInitRank failed on rank " + std::to_string(rank) + ": " + comm.error();
      ranks.comms.clear();
      return ranks;
    }
    auto note = [&](int level, TrialOutcome outcome, const std::string& what) {
      if (level <= worst) return;
      worst = level;
      ranks.fault = outcome;
      ranks.reason = "rank " + std::to_string(rank) + ": " + what + " (" + settings + ")";
    };
    if (comm->has(fake::FaultKind::init_error))
      note(4, TrialOutcome::init_error, "ncclCommInitRank failed: ncclSystemError (injected init_error)");
    if (comm->has(fake::FaultKind::crash))
      note(3, TrialOutcome::crash, "worker killed by SIGABRT (injected crash)");
    // The fake NCCL fails the calls of a collective it offers no pair (the worker's sweep fails).
    if (comm->allowed.empty())
      note(3, TrialOutcome::crash, op + ": no algorithm/protocol available (" + comm->no_pair + ")");
    if (comm->has(fake::FaultKind::hang))
      note(2, TrialOutcome::timeout, "no answer within the size timeout (injected hang)");
    if (comm->has(fake::FaultKind::corrupt))
      note(1, TrialOutcome::wrong_data, "wrong elements in the result (injected corrupt)");
    ranks.comms.push_back(std::move(*comm));
  }
  return ranks;
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull) {
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::uint64_t trial_seed(const fake::FakeModel& model, const TrialRequest& request) {
  std::uint64_t hash = fnv1a(std::to_string(model.noise.seed));
  hash = fnv1a(describe_env(request.env), hash);
  hash = fnv1a("|" + std::string(to_string(request.phase)) + "|" + std::to_string(request.repeat) + "|" +
                   std::to_string(request.iterations) + "|" + std::to_string(request.grid.min_bytes) + "|" +
                   std::to_string(request.grid.max_bytes) + "|" + std::to_string(request.grid.factor),
               hash);
  for (const std::uint64_t bytes : request.sizes) hash = fnv1a("|" + std::to_string(bytes), hash);
  return hash;
}

double busbw_of(const std::string& op, std::uint64_t bytes, double time_us, int nranks) {
  if (!(time_us > 0)) return 0;
  return static_cast<double>(bytes) / (time_us * 1e-6) / 1e9 * fake::busbw_factor(op, nranks);
}

int fault_level(TrialOutcome outcome) {
  switch (outcome) {
    case TrialOutcome::init_error: return 4;
    case TrialOutcome::crash: return 3;
    case TrialOutcome::timeout: return 2;
    case TrialOutcome::wrong_data: return 1;
    default: return 0;
  }
}

// Each collective's model and its ranks' communicators; the trial's fault is the worst of theirs.
struct OpRanks {
  std::string op;
  fake::FakeModel model;
  Ranks ranks;
};
std::vector<OpRanks> resolve_ops(const fake::FakeModel& model, const Env& env, int nranks,
                                 const std::vector<std::string>& ops, Ranks& worst, bool every_rank = true) {
  std::vector<OpRanks> resolved;
  for (const std::string& op : ops) {
    fake::FakeModel op_model = fake::model_for_collective(model, op);
    Ranks ranks = resolve_ranks(op_model, env, nranks, every_rank, op);
    if (ranks.fault && (!worst.fault || fault_level(*ranks.fault) > fault_level(*worst.fault))) {
      worst.fault = ranks.fault;
      worst.reason = ranks.reason;
    }
    resolved.push_back({op, std::move(op_model), std::move(ranks)});
  }
  return resolved;
}

double trial_duration(std::size_t sizes, int warmup, int iterations) {
  return kTrialFixedCost_s + static_cast<double>(sizes) *
                                 static_cast<double>(std::max(0, warmup) + std::max(1, iterations)) *
                                 kPerOpCost_s;
}

// Pair mode (trial.h): the communicators of the request's env, each pair forced in turn as
// nccltune's tuner plugin forces it in the fake NCCL: a pair the env does not allow (its NCCL_ALGO
// or NCCL_PROTO list, an algorithm's `requires`) is unavailable and NCCL's own choice runs; a pair
// that corrupts (fake::corrupts) fails its own data check only. kNcclOwnChoice runs NCCL's own.
TrialMeasurement measure_pairs(const fake::FakeModel& model, int nranks, const TrialRequest& request) {
  TrialMeasurement m;
  const std::vector<std::uint64_t> sizes = request_sizes(request);
  Ranks worst;
  const std::vector<OpRanks> ops = resolve_ops(model, request.env, nranks, request.collectives, worst);
  const std::size_t points = sizes.size() * ops.size() * request.pairs.size();
  m.duration_s = trial_duration(points, request.warmup, request.iterations);
  m.workers = nranks;
  m.communicators = 1;
  if (worst.fault && *worst.fault != TrialOutcome::wrong_data) {
    m.outcome = *worst.fault;
    m.reason = worst.reason;
    return m;
  }
  const int iterations = std::max(1, request.iterations);
  fake::Noise noise = model.noise;
  noise.seed = trial_seed(model, request);
  std::vector<fake::NoiseSource> sources;
  for (int rank = 0; rank < nranks; ++rank) sources.emplace_back(noise, rank);
  for (const NcclChoice& choice : request.pairs) {
    const fake::AlgoProto pair{choice.algo, choice.proto};
    const bool forced = choice != kNcclOwnChoice;
    TrialOutcome outcome = TrialOutcome::ok;
    for (const OpRanks& op : ops) {
      for (std::uint64_t bytes : sizes) {
        const double b = static_cast<double>(bytes);
        double slowest = 0;
        bool unavailable = false;
        for (const fake::CommModel& comm : op.ranks.comms) {
          const bool offered =
              forced && std::find(comm.allowed.begin(), comm.allowed.end(), pair) != comm.allowed.end();
          unavailable = unavailable || (forced && !offered);
          const fake::AlgoProto runs = offered ? pair : fake::choose_algo_proto(op.model, comm, op.op, b);
          if (fake::corrupts(comm, runs)) outcome = TrialOutcome::wrong_data;
          const double time = fake::pair_op_time_us(op.model, comm, runs, op.op, b);
          fake::NoiseSource& source = sources[static_cast<std::size_t>(comm.rank)];
          for (int w = 0; w < request.warmup; ++w) source.next_factor();
          double sum = 0;
          for (int i = 0; i < iterations; ++i) sum += time * source.next_factor();
          slowest = std::max(slowest, sum / iterations);
        }
        m.ops.push_back(op.op);
        m.sizes.push_back(bytes);
        m.time_us.push_back(slowest);
        m.busbw.push_back(busbw_of(op.op, bytes, slowest, nranks));
        m.unavailable.push_back(unavailable ? 1 : 0);
      }
    }
    m.pair_outcomes.push_back(outcome);
  }
  return m;
}

TrialMeasurement measure(const fake::FakeModel& model, int nranks, const TrialRequest& request) {
  if (!request.pairs.empty()) return measure_pairs(model, nranks, request);
  TrialMeasurement m;
  m.workers = nranks;
  m.communicators = 1;
  const std::vector<std::uint64_t> sizes = request_sizes(request);
  Ranks worst;
  const std::vector<OpRanks> ops = resolve_ops(model, request.env, nranks, request.collectives, worst);
  m.duration_s = trial_duration(sizes.size() * ops.size(), request.warmup, request.iterations);
  if (worst.fault) {
    m.outcome = *worst.fault;
    m.reason = worst.reason;
    if (m.outcome == TrialOutcome::timeout) m.duration_s = kTrialFixedCost_s + kHangCost_s;
    if (m.outcome == TrialOutcome::crash) m.duration_s = kTrialFixedCost_s + kCrashCost_s;
    if (m.outcome == TrialOutcome::init_error) m.duration_s = kTrialFixedCost_s;
    if (m.outcome != TrialOutcome::wrong_data) return m;
  }
  const int iterations = std::max(1, request.iterations);
  fake::Noise noise = model.noise;
  noise.seed = trial_seed(model, request);
  std::vector<fake::NoiseSource> sources;
  for (int rank = 0; rank < nranks; ++rank) sources.emplace_back(noise, rank);
  for (const OpRanks& op : ops) {
    const std::vector<fake::CommModel>& comms = op.ranks.comms;
    for (std::uint64_t bytes : sizes) {
      // NCCL's account of its own choice, as the fake prints it for rank 0 (TUNING).
      if (!comms.empty()) {
        const fake::AlgoProto chosen =
            fake::choose_algo_proto(op.model, comms.front(), op.op, static_cast<double>(bytes));
        m.nccl_choices.push_back(NcclChoice{chosen.algo, chosen.proto});
      }
      double slowest = 0;
      for (std::size_t r = 0; r < comms.size(); ++r) {
        // A pair that corrupts when it runs (fake::corrupts): the data check finds it.
        if (m.reason.empty() &&
            fake::corrupts(comms[r],
                           fake::choose_algo_proto(op.model, comms[r], op.op, static_cast<double>(bytes)))) {
          m.outcome = TrialOutcome::wrong_data;
          m.reason = "rank " + std::to_string(comms[r].rank) +
                     ": wrong elements in the result (injected corrupt, " + op.op + " " +
                     std::to_string(bytes) + " B) (" + describe_env(request.env) + ")";
        }
        const double time = fake::op_time_us(op.model, comms[r], op.op, static_cast<double>(bytes));
        fake::NoiseSource& source = sources[static_cast<std::size_t>(comms[r].rank)];
        for (int w = 0; w < request.warmup; ++w) source.next_factor();
        double sum = 0;
        for (int i = 0; i < iterations; ++i) sum += time * source.next_factor();
        slowest = std::max(slowest, sum / iterations);
      }
      m.ops.push_back(op.op);
      m.sizes.push_back(bytes);
      m.time_us.push_back(slowest);
      m.busbw.push_back(busbw_of(op.op, bytes, slowest, nranks));
    }
  }
  return m;
}

void collect(const fake::Condition& condition, std::set<std::string>& names) {
  for (const auto& [name, values] : condition) names.insert(name);
}

}  // namespace

namespace {

// `model` at `nodes` nodes (0: the count it was resolved for) of equal blocks of `nranks`.
fake::FakeModel model_at(const fake::FakeModel& model, int nranks, int nodes) {
  const int count = nodes > 0 ? nodes : model.for_nodes;
  return fake::model_for_nodes(model, count, nranks % count == 0 ? nranks / count : 0);
}

}  // namespace

ModelExecutor::ModelExecutor(const fake::FakeModel& model, int nranks, int nodes)
    : model_(std::make_shared<const fake::FakeModel>(model_at(model, nranks, nodes))),
      nranks_(nranks),
      stats_(std::make_shared<ModelExecutorStats>()) {}

TrialMeasurement ModelExecutor::operator()(const TrialRequest& request) const {
  const auto start = std::chrono::steady_clock::now();
  TrialMeasurement m = measure(*model_, nranks_, request);
  stats_->trials += 1;
  stats_->simulated_s += m.duration_s;
  stats_->wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

TrialExecutor ModelExecutor::executor() const {
  return [self = *this](const TrialRequest& request) { return self(request); };
}

std::function<double()> ModelExecutor::clock() const {
  return [stats = stats_] { return stats->simulated_s; };
}

TrialExecutor make_model_executor(const fake::FakeModel& model, int nranks, int nodes) {
  return ModelExecutor(model, nranks, nodes).executor();
}

std::optional<TrialOutcome> model_fault(const fake::FakeModel& model, const Env& env, int nranks,
                                        std::string* reason, const std::vector<std::string>& ops) {
  Ranks worst;
  resolve_ops(model, env, nranks, ops, worst);
  if (reason) *reason = worst.reason;
  return worst.fault;
}

std::optional<ModelPoint> model_point(const fake::FakeModel& model, const Env& env, int nranks,
                                      std::uint64_t bytes, const std::string& op) {
  const fake::FakeModel op_model = fake::model_for_collective(model, op);
  Ranks ranks = resolve_ranks(op_model, env, nranks, false, op);
  if (ranks.fault) return std::nullopt;
  ModelPoint point;
  for (const auto& comm : ranks.comms) {
    if (fake::corrupts(comm, fake::choose_algo_proto(op_model, comm, op, static_cast<double>(bytes))))
      return std::nullopt;
    const double time = fake::op_time_us(op_model, comm, op, static_cast<double>(bytes));
    if (time >= point.time_us) {
      point.time_us = time;
      const fake::AlgoProto pair = fake::choose_algo_proto(op_model, comm, op, static_cast<double>(bytes));
      point.algo = pair.algo;
      point.proto = pair.proto;
    }
  }
  point.busbw = busbw_of(op, bytes, point.time_us, nranks);
  return point;
}

namespace {

// The points (trial.h) of `ops` over `sizes`. Every rank's op time differs only by its slow_rank
// factor: the slowest rank is rank 0's pair time scaled by the largest factor.
std::optional<std::vector<double>> noiseless_curve(const fake::FakeModel& model, const Env& env, int nranks,
                                                   const std::vector<std::uint64_t>& sizes,
                                                   const std::vector<std::string>& ops) {
  Ranks worst;
  const std::vector<OpRanks> resolved = resolve_ops(model, env, nranks, ops, worst, false);
  if (worst.fault) return std::nullopt;
  std::vector<double> busbw;
  busbw.reserve(sizes.size() * ops.size());
  for (const OpRanks& op : resolved) {
    if (op.ranks.comms.empty()) return std::nullopt;
    double slow = 0;
    for (const auto& comm : op.ranks.comms) slow = std::max(slow, comm.slow_factor);
    const fake::CommModel& first = op.ranks.comms.front();
    for (std::uint64_t bytes : sizes) {
      const double b = static_cast<double>(bytes);
      const fake::AlgoProto pair = fake::choose_algo_proto(op.model, first, op.op, b);
      for (const auto& comm : op.ranks.comms)
        if (fake::corrupts(comm, fake::choose_algo_proto(op.model, comm, op.op, b))) return std::nullopt;
      const double time = fake::pair_time_us(op.model, first, pair, op.op, b) * slow;
      busbw.push_back(busbw_of(op.op, bytes, time, nranks));
    }
  }
  return busbw;
}

// The sizes of the points of `ops` over `sizes`.
std::vector<std::size_t> point_sizes(const std::vector<std::uint64_t>& sizes, std::size_t ops) {
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < ops; ++i) points.insert(points.end(), sizes.begin(), sizes.end());
  return points;
}

double objective_of(const std::optional<std::vector<double>>& baseline,
                    const std::optional<std::vector<double>>& candidate,
                    const std::vector<std::uint64_t>& sizes, Objective objective, double tolerance) {
  if (!baseline || !candidate) return 0;
  const std::vector<std::size_t> s = point_sizes(sizes, sizes.empty() ? 0 : baseline->size() / sizes.size());
  const Score result = score(objective, s, *baseline, *candidate, tolerance);
  return result.acceptable ? result.value : 0;
}

}  // namespace

std::optional<Score> model_score(const fake::FakeModel& model, const Env& env, int nranks,
                                 const std::vector<std::uint64_t>& sizes, Objective objective,
                                 double tolerance, const std::vector<std::string>& ops) {
  const auto baseline = noiseless_curve(model, {}, nranks, sizes, ops);
  const auto candidate = noiseless_curve(model, env, nranks, sizes, ops);
  if (!baseline || !candidate) return std::nullopt;
  return score(objective, point_sizes(sizes, ops.size()), *baseline, *candidate, tolerance);
}

double model_objective(const fake::FakeModel& model, const Env& env, int nranks,
                       const std::vector<std::uint64_t>& sizes, Objective objective, double tolerance,
                       const std::vector<std::string>& ops) {
  return objective_of(noiseless_curve(model, {}, nranks, sizes, ops),
                      noiseless_curve(model, env, nranks, sizes, ops), sizes, objective, tolerance);
}

std::vector<Env> grid_configs(const SearchSpace& space) {
  std::vector<Env> configs{Env{}};
  for (const Knob& knob : space.knobs) {
    std::vector<Env> next;
    next.reserve(configs.size() * (knob.values.size() + 1));
    for (const Env& env : configs) {
      next.push_back(env);  // unset: NCCL's default
      for (const std::string& value : knob.values) {
        Env with = env;
        with[knob.name] = value;
        next.push_back(std::move(with));
      }
    }
    configs = std::move(next);
  }
  return configs;
}

std::uint64_t grid_size(const SearchSpace& space) {
  std::uint64_t size = 1;
  for (const Knob& knob : space.knobs) {
    const std::uint64_t choices = knob.values.size() + 1;
    if (size > std::numeric_limits<std::uint64_t>::max() / choices)
      return std::numeric_limits<std::uint64_t>::max();
    size *= choices;
  }
  return size;
}

// The variables the fake NCCL reads whatever a model says (tests/fake-gpu/FIDELITY.md): the pair
// filters, the channel bounds, NVLS's switch and channels, PAT's switch.
constexpr std::array<const char*, 9> kNcclRuleVariables = {
    "NCCL_ALGO",     "NCCL_PROTO",       "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
    "NCCL_MAX_CTAS", "NCCL_NVLS_ENABLE", "NCCL_NVLS_NCHANNELS", "NCCL_PAT_ENABLE"};

std::vector<std::string> model_variables(const fake::FakeModel& model) {
  std::set<std::string> names(kNcclRuleVariables.begin(), kNcclRuleVariables.end());
  // NVLS's switch and channels change nothing where the model has no NVLS to run, nor PAT's
  // switch without PAT.
  const bool nvls = model.nccl_log.nvls.value_or(model.algos.contains("NVLS") || model.algos.contains("NVLSTree"));
  if (!nvls) {
    names.erase("NCCL_NVLS_ENABLE");
    names.erase("NCCL_NVLS_NCHANNELS");
  }
  if (!model.algos.contains("PAT")) names.erase("NCCL_PAT_ENABLE");
  for (const auto& effect : model.effects) collect(effect.when, names);
  for (const auto& fault : model.faults) collect(fault.when, names);
  for (const auto& [algo, algo_model] : model.algos) collect(algo_model.requires_env, names);
  return {names.begin(), names.end()};
}

namespace {

std::set<std::string> multi_variable_knobs(const fake::FakeModel& model) {
  std::set<std::string> names;
  auto add = [&](const fake::Condition& condition) {
    if (condition.size() > 1) collect(condition, names);
  };
  for (const auto& effect : model.effects) add(effect.when);
  for (const auto& fault : model.faults) add(fault.when);
  return names;
}

bool is_simple_knob(const std::string& name, const fake::FakeModel& model,
                    const std::set<std::string>& multi) {
  if (std::find(kNcclRuleVariables.begin(), kNcclRuleVariables.end(), name) != kNcclRuleVariables.end())
    return false;
  if (multi.count(name)) return false;
  for (const auto& [algo, algo_model] : model.algos)
    if (algo_model.requires_env.count(name)) return false;
  for (const auto& fault : model.faults)
    if (fake::only_slows(fault.kind) && fault.when.count(name)) return false;
  for (const auto& effect : model.effects)  // acts on some pairs' ops: depends on the pair chosen
    if (effect.scoped() && effect.when.count(name)) return false;
  return true;
}

fake::NcclEnv only(const std::string& name, const std::optional<std::string>& choice) {
  fake::NcclEnv env;
  if (choice) env.emplace(name, *choice);
  return env;
}

bool fatal_alone(const std::string& name, const std::optional<std::string>& choice,
                 const fake::FakeModel& model) {
  for (const auto& fault : model.faults)
    if (!fake::only_slows(fault.kind) && fault.when.size() == 1 && fault.when.count(name) &&
        fake::holds(fault.when, only(name, choice)))
      return true;
  return false;
}

}  // namespace

std::vector<KnobChoices> reduced_grid(const SearchSpace& space, const fake::FakeModel& model) {
  const std::vector<std::string> variables = model_variables(model);
  const std::set<std::string> multi = multi_variable_knobs(model);
  std::vector<KnobChoices> grid;
  for (const Knob& knob : space.knobs) {
    if (std::find(variables.begin(), variables.end(), knob.name) == variables.end()) continue;
    std::vector<std::optional<std::string>> all{std::nullopt};
    all.insert(all.end(), knob.values.begin(), knob.values.end());
    std::vector<std::optional<std::string>> alive;
    for (const auto& choice : all)
      if (!fatal_alone(knob.name, choice, model)) alive.push_back(choice);
    if (alive.empty()) alive.push_back(std::nullopt);  // every choice fails: unset stands for all
    KnobChoices kept{knob.name, {}};
    if (!is_simple_knob(knob.name, model, multi)) {
      kept.choices = alive;
    } else {
      struct Factors {
        std::optional<std::string> choice;
        double busbw = 1, lat = 1;
      };
      std::vector<Factors> factors;
      for (const auto& choice : alive) {
        Factors f{choice};
        for (const auto& effect : model.effects) {
          if (!effect.when.count(knob.name) || !fake::holds(effect.when, only(knob.name, choice))) continue;
          f.busbw *= effect.busbw_scale;
          f.lat *= effect.lat_scale;
        }
        factors.push_back(f);
      }
      for (std::size_t i = 0; i < factors.size(); ++i) {
        bool dominated = false;
        for (std::size_t j = 0; j < factors.size() && !dominated; ++j) {
          if (i == j) continue;
          const bool as_good = factors[j].busbw >= factors[i].busbw && factors[j].lat <= factors[i].lat;
          const bool equal = factors[j].busbw == factors[i].busbw && factors[j].lat == factors[i].lat;
          dominated = as_good && (!equal || j < i);  // of equal choices, the first (unset) stays
        }
        if (!dominated) kept.choices.push_back(factors[i].choice);
      }
    }
    if (kept.choices.size() == 1 && !kept.choices.front()) continue;  // only unset: nothing to cross
    grid.push_back(std::move(kept));
  }
  return grid;
}

std::vector<KnobChoices> reduced_grid(const SearchSpace& space, const fake::FakeModel& model,
                                      const std::vector<std::string>& ops) {
  std::vector<fake::FakeModel> op_models;
  bool own_factors = false;  // some collective has effects, faults or algorithms of its own
  for (const std::string& op : ops) {
    op_models.push_back(fake::model_for_collective(model, op));
    const auto section = model.collectives.find(op);
    if (section != model.collectives.end())
      own_factors |= section->second.effects || section->second.faults || section->second.algos;
  }
  if (op_models.empty()) return {};
  if (!own_factors) return reduced_grid(space, op_models.front());
  // A choice dominated for one collective may be the best for another: no dominance, only the
  // variables some collective reacts to, less the choices fatal for any of them.
  std::set<std::string> variables;
  for (const auto& op_model : op_models)
    for (const auto& name : model_variables(op_model)) variables.insert(name);
  std::vector<KnobChoices> grid;
  for (const Knob& knob : space.knobs) {
    if (!variables.count(knob.name)) continue;
    std::vector<std::optional<std::string>> all{std::nullopt};
    all.insert(all.end(), knob.values.begin(), knob.values.end());
    KnobChoices kept{knob.name, {}};
    for (const auto& choice : all)
      if (std::none_of(op_models.begin(), op_models.end(),
                       [&](const fake::FakeModel& m) { return fatal_alone(knob.name, choice, m); }))
        kept.choices.push_back(choice);
    if (kept.choices.empty()) kept.choices.push_back(std::nullopt);
    if (kept.choices.size() == 1 && !kept.choices.front()) continue;
    grid.push_back(std::move(kept));
  }
  return grid;
}

std::uint64_t reduced_grid_size(const std::vector<KnobChoices>& grid) {
  std::uint64_t size = 1;
  for (const auto& knob : grid) size *= knob.choices.size();
  return size;
}

GridBest grid_best(const fake::FakeModel& model, const SearchSpace& space, int nranks,
                   const std::vector<std::uint64_t>& sizes, Objective objective, double tolerance,
                   const std::vector<std::string>& ops) {
  GridBest best;
  const auto baseline = noiseless_curve(model, {}, nranks, sizes, ops);
  best.objective = objective_of(baseline, baseline, sizes, objective, tolerance);
  const std::vector<KnobChoices> grid = reduced_grid(space, model, ops);
  std::vector<std::size_t> index(grid.size(), 0);
  Env env;
  while (true) {
    env.clear();
    for (std::size_t k = 0; k < grid.size(); ++k)
      if (const auto& choice = grid[k].choices[index[k]]) env[grid[k].name] = *choice;
    ++best.configs;
    const double value =
        objective_of(baseline, noiseless_curve(model, env, nranks, sizes, ops), sizes, objective, tolerance);
    if (value > best.objective) {
      best.objective = value;
      best.env = env;
    }
    std::size_t k = 0;
    while (k < grid.size() && ++index[k] == grid[k].choices.size()) index[k++] = 0;
    if (k == grid.size()) break;
  }
  return best;
}

}  // namespace nccltune::test_support
