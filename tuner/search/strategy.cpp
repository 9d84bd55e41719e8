#include "search/strategy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>

#include "profile/nccl_names.h"
#include "search/shippable_env.h"

namespace nccltune {

namespace {

constexpr const char* kAlgo = "NCCL_ALGO";
constexpr const char* kProto = "NCCL_PROTO";

struct Candidate {
  Env env;
  Score score;
};

std::vector<double> median_curve(std::vector<std::vector<double>> curves) {
  if (curves.empty()) return {};
  std::vector<double> median(curves.front().size(), 0.0);
  for (size_t i = 0; i < median.size(); ++i) {
    std::vector<double> at;
    for (const auto& c : curves) at.push_back(c[i]);
    std::sort(at.begin(), at.end());
    median[i] = at[at.size() / 2];
  }
  return median;
}

bool better(const Score& a, const Score& b) {
  if (a.acceptable != b.acceptable) return a.acceptable;
  return a.value > b.value;
}

Env merged(const Env& a, const Env& b) {
  Env out = a;
  out.insert(b.begin(), b.end());
  return out;
}

// Each knob's values that beat the defaults beyond noise on their own (or with a knob that acts
// only with them, search_space.h's `with`), best first.
using HelpfulValues = std::map<std::string, std::vector<Candidate>>;

// The value after `value` in `name`'s helpful values; none past the last or for other values
// (an NCCL_ALGO/NCCL_PROTO list derived from the pair cross is no screened value).
std::optional<std::string> next_helpful_value(const HelpfulValues& helpful, const std::string& name,
                                              const std::string& value) {
  const auto values = helpful.find(name);
  if (values == helpful.end()) return std::nullopt;
  const auto& ranked = values->second;
  const auto at =
      std::find_if(ranked.begin(), ranked.end(), [&](const Candidate& c) { return c.env.at(name) == value; });
  const auto next = std::find_if(at, ranked.end(), [&](const Candidate& c) { return c.env.at(name) != value; });
  if (next == ranked.end()) return std::nullopt;
  return next->env.at(name);
}

using AlgoProto = std::pair<std::string, std::string>;

// One NCCL_ALGO x NCCL_PROTO pair measured on the final grid (points as in trial.h).
struct PairCurve {
  AlgoProto pair;
  std::vector<ShapedOp> ops;
  std::vector<std::uint64_t> sizes;
  std::vector<double> time_us;
};

// Pair mode: the pairs' times under one env, one curve per run that measured them (infinite
// where NCCL did not offer the pair); a pair's curve is the median of its runs at each point.
struct PairSamples {
  std::vector<ShapedOp> ops;
  std::vector<std::uint64_t> sizes;
  std::map<AlgoProto, std::vector<std::vector<double>>> runs;  // by pair
  std::set<AlgoProto> failed;                                  // failed its data check in some run
  int count = 0;                                               // runs added

  bool covers(const std::vector<AlgoProto>& pairs) const {
    return std::all_of(pairs.begin(), pairs.end(), [&](const AlgoProto& p) { return runs.count(p) > 0; });
  }

  // The pairs of `m` (request.pairs, `pairs` from index `first` on).
  void add(const std::vector<AlgoProto>& pairs, const TrialMeasurement& m, std::size_t in_request,
           std::size_t first) {
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      TrialMeasurement pair = pair_points(m, in_request, first + p);
      if (pair.outcome != TrialOutcome::ok) failed.insert(pairs[p]);
      for (std::size_t i = 0; i < pair.time_us.size() && i < pair.unavailable.size(); ++i)
        if (pair.unavailable[i]) pair.time_us[i] = std::numeric_limits<double>::infinity();
      runs[pairs[p]].push_back(std::move(pair.time_us));
      ops = point_ops(pair);
      sizes = std::move(pair.sizes);
    }
    ++count;
  }

  // The curves of `pairs` that passed their data check in every run.
  std::vector<PairCurve> curves(const std::vector<AlgoProto>& pairs) const {
    std::vector<PairCurve> out;
    for (const AlgoProto& pair : pairs)
      if (!failed.count(pair) && runs.count(pair))
        out.push_back({pair, ops, sizes, median_curve(runs.at(pair))});
    return out;
  }
};

// NCCL_NVLS_ENABLE=0 leaves NCCL no NVLS support, so neither NVLS nor NVLSTree runs (ncclNvlsInit,
// src/transport/nvls.cc); a list does the rest.
bool allows(const Env& env, const AlgoProto& pair, const std::string& op) {
  const auto nvls = env.find("NCCL_NVLS_ENABLE");
  if (nvls != env.end() && nvls->second == "0" && (pair.first == "NVLS" || pair.first == "NVLSTree")) return false;
  return env_allows(env, kAlgo, pair.first, op) && env_allows(env, kProto, pair.second, op);
}

// Whether `env` lets NCCL use `pair` for some collective of `ops`.
bool allows_any(const Env& env, const AlgoProto& pair, const std::vector<std::string>& ops) {
  return std::any_of(ops.begin(), ops.end(), [&](const std::string& op) { return allows(env, pair, op); });
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// Whether `names` are every name NCCL has for `variable`: such a list filters nothing (NCCL's own
// choice always stays), and for NCCL_PROTO it would turn on LL128 where NCCL leaves it off.
bool names_everything(const char* variable, const std::set<std::string>& names) {
  const auto every = [&](const auto& table) {
    return std::all_of(table.begin(), table.end(), [&](std::string_view name) {
      return std::any_of(names.begin(), names.end(),
                         [&](const std::string& n) { return same_text_ignoring_case(n, name); });
    });
  };
  return std::string_view(variable) == kAlgo ? every(kNcclAlgorithms) : every(kNcclProtocols);
}

// One NCCL_ALGO or NCCL_PROTO value from each collective's names: the plain list when they agree
// (or cannot be scoped), else one entry per collective ("allgather:LL128,Simple;allreduce:LL,Simple").
// An NCCL_ALGO list without Ring is scoped too where it can be: plain, it would leave Broadcast
// and Reduce (Ring only) nothing, which NCCL 2.24+ fails (shippable_env.h).
// Collectives NCCL_ALGO does not apply to (alltoall) are left out, and so is a collective whose
// list names every algorithm or protocol (no filter); "" when nothing is left.
std::string list_value(const char* variable, const std::map<std::string, std::set<std::string>>& by_op,
                       bool scoped) {
  std::set<std::string> all;
  bool alike = true;
  for (const auto& [op, names] : by_op) {
    all.insert(names.begin(), names.end());
    alike = alike && names == by_op.begin()->second;
  }
  const bool keeps_ring = std::string_view(variable) != kAlgo ||
                          std::any_of(all.begin(), all.end(), [](const std::string& n) {
                            return same_text_ignoring_case(n, "Ring");
                          });
  if ((alike && keeps_ring) || !scoped) return names_everything(variable, all) ? "" : joined(all);
  std::string value;
  for (const auto& [op, names] : by_op)
    if (const auto function = nccl_function_name(op); function && !names_everything(variable, names))
      value += (value.empty() ? "" : ";") + std::string(*function) + ":" + joined(names);
  return value;
}

bool sets_algo_or_proto(const Env& env) {
  return env.count(kAlgo) > 0 || env.count(kProto) > 0;
}

// What the pairs of an env are measured under: the env less its NCCL_ALGO and NCCL_PROTO.
Env without_algo_proto(Env env) {
  env.erase(kAlgo);
  env.erase(kProto);
  return env;
}

// Per collective, at each measured size, the fastest of the pairs that `env` allows (and that
// NCCL offered there: pair mode leaves no time where it did not, and a pair's env trial measures
// only the collectives NCCL runs it for).
std::map<ShapedOp, std::vector<SizeChoice>> fastest_pair_per_size(const std::vector<PairCurve>& curves,
                                                                  const Env& env) {
  struct Fastest {
    const AlgoProto* pair = nullptr;
    double time_us = 0;
  };
  std::map<ShapedOp, std::map<std::uint64_t, Fastest>> fastest;  // by collective and shape, then size
  for (const auto& c : curves)
    for (std::size_t i = 0; i < c.sizes.size() && i < c.ops.size() && i < c.time_us.size(); ++i) {
      // A list is read per NCCL collective, for every shape.
      if (!allows(env, c.pair, c.ops[i].collective) || !std::isfinite(c.time_us[i])) continue;
      Fastest& best = fastest[c.ops[i]][c.sizes[i]];
      if (!best.pair || c.time_us[i] < best.time_us) best = {&c.pair, c.time_us[i]};
    }
  std::map<ShapedOp, std::vector<SizeChoice>> choices;
  for (const auto& [op, by_size] : fastest)
    for (const auto& [bytes, best] : by_size) {
      SizeChoice choice;
      choice.min_bytes = choice.max_bytes = bytes;
      choice.algo = best.pair->first;
      choice.proto = best.pair->second;
      choices[op].push_back(choice);
    }
  return choices;
}

class Search {
 public:
  Search(const SearchSpace& space, const StrategyOptions& options, const TrialExecutor& execute,
         const ProgressCallback& progress)
      : space_(space), options_(options), execute_(execute), progress_(progress) {
    if (options_.clock_s) {
      clock_ = options_.clock_s;
    } else {
      const auto start = std::chrono::steady_clock::now();
      clock_ = [start] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
    }
    start_s_ = clock_();
  }

  StrategyResult run() {
    if (!measure_baseline()) return std::move(result_);
    screen();
    cross_algo_proto();
    cross_knobs_that_matter();
    const std::vector<Candidate> measured_best = halve();
    auto finalists = shippable(measured_best);
    if (finalists.empty() && !measured_best.empty())
      rejected_ =
          describe_env(measured_best.front().env) +
          " is faster within the measured sizes but would restrict NCCL beyond them (see the notes); its "
          "choices stay in per_size";
    while (!finalists.empty() && !pairs_hold_under(finalists.front().env)) {
      rejected_ =
          describe_env(finalists.front().env) +
          " makes an NCCL_ALGO x NCCL_PROTO pair fail that runs with NCCL's defaults (see the failed trials)";
      finalists.erase(finalists.begin());
    }
    confirm(finalists);
    choose_per_size();
    return std::move(result_);
  }

 private:
  double elapsed() const { return clock_() - start_s_; }

  // Trials of the final grid cost more than screening ones; keep what the confirmation needs: A,
  // B and, for a winner with lists, the winner without each of them, in each round.
  int reserve_trials() const { return 4 * options_.confirm_rounds; }
  double reserve_seconds() const { return reserve_trials() * final_trial_s_; }
  bool budget_left(int trials_needed = 1) const {
    if (options_.max_trials > 0 && result_.trials + trials_needed + reserve_trials() > options_.max_trials)
      return false;
    return elapsed() + trials_needed * mean_trial_s() + reserve_seconds() <
           static_cast<double>(options_.budget.count());
  }
  double mean_trial_s() const { return measured_ > 0 ? measured_s_ / measured_ : 0.0; }

  TrialMeasurement run_trial(TrialRequest request) {
    TrialMeasurement m = execute_(request);
    // NCCL's own choice at the largest size of each collective, when this trial ran the defaults
    // and NCCL said.
    if (request.env.empty() && m.outcome == TrialOutcome::ok && m.nccl_choices.size() == m.sizes.size())
      for (std::size_t i = 0; i < m.sizes.size() && i < m.ops.size(); ++i)
        if (m.sizes[i] == options_.final_grid.max_bytes && m.nccl_choices[i] &&
            point_op(m, i).role == CommRole::world)
          default_at_largest_[m.ops[i]] = *m.nccl_choices[i];
    // A pair-mode run counts one trial per pair it measured; one that failed as a whole, one.
    const int trials = m.outcome == TrialOutcome::ok ? trial_count(request) : 1;
    result_.trials += trials;
    count_trial(result_.counts, request, m);
    if (m.cached) {
      result_.cached_trials += trials;
    } else {
      measured_ += trials;
      measured_s_ += m.duration_s;
      result_.workers += m.workers;
      result_.communicators += m.communicators;
      if (!request.pairs.empty() && m.outcome == TrialOutcome::ok) result_.pairs_in_process += trials;
    }
    if (!request.pairs.empty()) {
      note_failed_pairs(request, m);
    } else if (m.outcome != TrialOutcome::ok) {
      ++result_.failed_trials;
      // Named once, as a failed pair is: the same config failing again is not another config.
      if (std::none_of(result_.failed.begin(), result_.failed.end(), [&](const FailedTrial& f) {
            return f.env == request.env && f.outcome == m.outcome;
          }))
        result_.failed.push_back({request.env, m.outcome, m.reason});
      // A setting that fails alone is not crossed again. An NCCL_ALGO or NCCL_PROTO list that
      // fails says nothing of its pairs: one that corrupts lets NCCL pick some corrupting pair,
      // and one that leaves a tuned collective no algorithm (NCCL_ALGO=Tree and all_gather)
      // fails that collective's calls. Its pairs are still measured, each on its own.
      if (request.env.size() == 1 && !sets_algo_or_proto(request.env))
        broken_.insert(request.env.begin()->first + "=" + request.env.begin()->second);
    }
    if (progress_) {
      StrategyProgress p;
      p.env_trial = result_.counts.trials;
      p.trial = result_.trials;
      p.planned = std::max(planned_, result_.trials);
      p.phase = request.phase;
      p.elapsed_s = elapsed();
      p.eta_s = std::max(0, planned_ - result_.trials) * mean_trial_s();
      p.best_gain = best_gain_;
      progress_(p, request, m);
    }
    return m;
  }

  // Pair mode: a run that failed as a whole (a crash, a hang, init) is one failure of its env,
  // since which pair caused it is unknown (cross_pairs measures them again as env trials). Each
  // pair that failed its own data check is recorded as the env trial of that pair would have
  // been (the env plus NCCL_ALGO and NCCL_PROTO), so that shippable_env's corrupt pairs and the
  // failed list read the same either way.
  void note_failed_pairs(const TrialRequest& request, const TrialMeasurement& m) {
    if (m.outcome != TrialOutcome::ok) {
      ++result_.failed_trials;
      result_.failed.push_back({request.env, m.outcome,
                                "pair mode, " + std::to_string(request.pairs.size()) +
                                    " pairs in one run (each measured again alone): " + m.reason});
      return;
    }
    for (std::size_t p = 0; p < request.pairs.size(); ++p) {
      const TrialMeasurement pair = pair_points(m, request.pairs.size(), p);
      if (pair.outcome == TrialOutcome::ok) continue;
      ++result_.failed_trials;
      const Env env =
          request.pairs[p] == kNcclOwnChoice
              ? request.env
              : merged(request.env, {{kAlgo, request.pairs[p].algo}, {kProto, request.pairs[p].proto}});
      // Named once: the runs of one pair set (pair_rounds) fail the same pair each time.
      if (std::any_of(result_.failed.begin(), result_.failed.end(),
                      [&](const FailedTrial& f) { return f.env == env && f.outcome == pair.outcome; }))
        continue;
      result_.failed.push_back({env, pair.outcome,
                                pair.reason.empty()
                                    ? "wrong elements in the result (pair mode, its own data check)"
                                    : pair.reason});
    }
  }

  bool involves_broken(const Env& env) const {
    for (const auto& [name, value] : env)
      if (broken_.count(name + "=" + value)) return true;
    return false;
  }

  // A trial of the tuned collectives; `guarded` adds the guards (the defaults' repeats and the
  // confirmation).
  TrialRequest request(Env env, TrialPhase phase, const SizeGrid& grid, int iterations, int repeat,
                       bool guarded = false) const {
    TrialRequest r{std::move(env),       phase, grid, iterations, options_.warmup, repeat,
                   options_.collectives, {},    {},   comm_names(options_.comms)};
    if (guarded) r.collectives.insert(r.collectives.end(), options_.guards.begin(), options_.guards.end());
    return r;
  }
  TrialRequest screen_request(Env env, TrialPhase phase, int repeat = 0) const {
    return request(std::move(env), phase, options_.screen_grid, options_.screen_iterations, repeat);
  }

  Score score_against(const std::vector<double>& baseline, const std::vector<double>& candidate,
                      const std::vector<std::uint64_t>& sizes) const {
    std::vector<std::size_t> s(sizes.begin(), sizes.end());
    return score(options_.objective, s, baseline, candidate, options_.tolerance);
  }

  // The score over the tuned collectives' points; a guard's points (when measured) only count
  // against: a size of one slower than the tolerance makes the score unacceptable.
  Score score_against(const TrialMeasurement& baseline, const std::vector<double>& candidate) const {
    TrialMeasurement cand = baseline;
    cand.busbw = candidate;
    const TrialMeasurement tuned_base = points_of(baseline, options_.collectives);
    Score s = score_against(tuned_base.busbw, points_of(cand, options_.collectives).busbw, tuned_base.sizes);
    if (options_.guards.empty()) return s;
    const TrialMeasurement guard_base = points_of(baseline, options_.guards);
    if (guard_base.sizes.empty()) return s;
    const Score g = score_against(guard_base.busbw, points_of(cand, options_.guards).busbw, guard_base.sizes);
    s.worst_ratio = std::min(s.worst_ratio, g.worst_ratio);
    s.acceptable = s.acceptable && g.acceptable;
    return s;
  }

  void note(const Env& env, const TrialMeasurement& m) {
    if (m.outcome != TrialOutcome::ok || m.busbw.size() != screen_baseline_.size()) return;
    const Score s = score_against(screen_baseline_, m.busbw, m.sizes);
    screened_.push_back({env, s});
    if (s.acceptable) best_gain_ = std::max(best_gain_, s.value);
  }

  bool measure_baseline() {
    int singles = 0;
    for (const auto& knob : space_.knobs) singles += static_cast<int>(knob.values.size());
    planned_ = options_.baseline_repeats + singles + 12 + 2 * options_.halving_candidates + reserve_trials();
    std::vector<std::vector<double>> repeats;
    for (int r = 0; r < std::max(1, options_.baseline_repeats); ++r) {
      TrialMeasurement m = run_trial(
          request({}, TrialPhase::baseline, options_.screen_grid, options_.screen_iterations, r, true));
      if (m.outcome != TrialOutcome::ok) {
        result_.error = "NCCL's defaults failed (" + std::string(to_string(m.outcome)) + "): " + m.reason;
        return false;
      }
      m = points_of(m, options_.collectives);
      repeats.push_back(m.busbw);
      screen_sizes_ = m.sizes;
      final_trial_s_ = std::max(final_trial_s_, m.duration_s * final_cost_ratio());
    }
    screen_baseline_ = median_curve(repeats);
    // The noise floor on the scale the decisions use: how far each repeat of the defaults scores
    // from their median. A per-size spread would be far wider than the spread of a geometric
    // mean over all sizes, and hide every small but real gain.
    result_.noise = 0.005;
    for (const auto& repeat : repeats)
      result_.noise =
          std::max(result_.noise, std::abs(score_against(screen_baseline_, repeat, screen_sizes_).value - 1));
    return true;
  }

  // How much more a final-grid trial costs than a screening one, for budgeting.
  double final_cost_ratio() const {
    const double sizes = static_cast<double>(grid_sizes(options_.final_grid).size()) /
                         static_cast<double>(std::max<size_t>(1, grid_sizes(options_.screen_grid).size()));
    const double iterations = static_cast<double>(options_.final_iterations + options_.warmup) /
                              static_cast<double>(std::max(1, options_.screen_iterations + options_.warmup));
    return std::max(1.0, sizes * iterations);
  }

  void screen() {
    if (!options_.carried.empty() && budget_left())
      note(options_.carried, run_trial(screen_request(options_.carried, TrialPhase::screen)));
    for (const auto& knob : space_.knobs) {
      if ((!options_.screen_algo_proto_singly || options_.pair_mode) &&
          (knob.name == kAlgo || knob.name == kProto))
        continue;
      // A knob that acts only with another is screened on top of that one's best value, and not
      // at all when none of its values beat the defaults (screened before it: the file's order).
      Env base;
      if (!knob.with.empty()) {
        const HelpfulValues helpful = helpful_values();
        const auto best = helpful.find(knob.with);
        if (best == helpful.end()) continue;
        base = best->second.front().env;
      }
      for (const auto& value : knob.values) {
        if (knob.default_value && *knob.default_value == value) continue;
        if (knob.name == kAlgo && !leaves_every_collective_an_algorithm(value)) continue;
        if (!budget_left()) return;
        const Env env = merged(base, {{knob.name, value}});
        note(env, run_trial(screen_request(env, TrialPhase::screen)));
      }
    }
  }

  bool runs_for_some_collective(const std::string& algo, const std::string& proto) const {
    return std::any_of(options_.collectives.begin(), options_.collectives.end(), [&](const std::string& op) {
      return nccl_runs_pair_for(op, algo, proto);
    });
  }

  // Whether NCCL_ALGO=`value` leaves each tuned collective some algorithm NCCL runs it with: a
  // single name that does not (NCCL_ALGO=Tree with all_gather tuned) fails that collective's
  // calls on NCCL 2.24+, so its screen could only fail. Lists and exclusions are screened.
  bool leaves_every_collective_an_algorithm(const std::string& value) const {
    if (!nccl_algorithm_index(value)) return true;
    return std::all_of(options_.collectives.begin(), options_.collectives.end(), [&](const std::string& op) {
      return std::any_of(kNcclProtocols.begin(), kNcclProtocols.end(),
                         [&](std::string_view proto) { return nccl_runs_pair_for(op, value, proto); });
    });
  }

  // A knob screened on top of another's value (`with`) that did not beat that value alone beyond
  // noise: what it measured is the other knob's gain, and it is no candidate of its own.
  bool adds_nothing(const Candidate& c) const {
    const std::optional<std::string> knob = screened_knob(c.env);
    if (!knob || c.env.size() != 2) return false;
    const Env alone{{*knob, c.env.at(*knob)}};
    const auto base = std::find_if(screened_.begin(), screened_.end(), [&](const Candidate& s) { return s.env == alone; });
    return base != screened_.end() && c.score.value <= base->score.value * (1 + result_.noise);
  }

  // The knob a screened env is a value of: its one variable, or for a knob screened on top of
  // another (`with`), that other one. None for crossed envs.
  std::optional<std::string> screened_knob(const Env& env) const {
    if (env.size() == 1) return env.begin()->first;
    if (env.size() != 2) return std::nullopt;
    for (const auto& [name, value] : env) {
      const Knob* knob = knob_named(name.c_str());
      if (knob && !knob->with.empty() && knob->with != name && env.count(knob->with)) return knob->with;
    }
    return std::nullopt;
  }

  const Knob* knob_named(const char* name) const {
    for (const auto& knob : space_.knobs)
      if (knob.name == name) return &knob;
    return nullptr;
  }

  // `pairs` under `base` on the final grid: the curves of those that ran, or none when the budget
  // ends the cross early (the fastest of some pairs may be slower than one never measured).
  std::optional<std::vector<PairCurve>> cross_pairs(const Env& base, const std::vector<AlgoProto>& pairs,
                                                    TrialPhase phase) {
    if (options_.pair_mode) {
      if (!budget_left(pair_runs_needed(base, pairs, phase) * static_cast<int>(pairs.size())))
        return std::nullopt;
      if (auto curves = cross_pairs_in_process(base, pairs, phase)) return curves;
    }
    if (!budget_left(static_cast<int>(pairs.size()))) return std::nullopt;  // none spent in vain
    std::vector<PairCurve> curves;
    for (const auto& pair : pairs) {
      if (!budget_left()) return std::nullopt;
      const Env env = merged(base, {{kAlgo, pair.first}, {kProto, pair.second}});
      // Only the tuned collectives NCCL runs the pair for: the pair as env leaves the others no
      // algorithm, and their calls would fail the trial (NCCL 2.24+: ncclInvalidUsage).
      TrialRequest r = request(env, phase, options_.final_grid, options_.screen_iterations, 0);
      std::erase_if(r.collectives, [&](const std::string& op) {
        return !nccl_runs_pair_for(op, pair.first, pair.second);
      });
      if (r.collectives.empty()) continue;
      const TrialMeasurement m = run_trial(r);
      if (m.outcome == TrialOutcome::ok) curves.push_back({pair, point_ops(m), m.sizes, m.time_us});
    }
    return curves;
  }

  int pair_rounds() const { return std::max(1, options_.pair_rounds); }

  // The runs cross_pairs_in_process would start: for the per-size phase, fewer by those of the
  // halving that measured these pairs under `base`.
  int pair_runs_needed(const Env& base, const std::vector<AlgoProto>& pairs, TrialPhase phase) const {
    const auto samples = final_samples_.find(base);
    if (phase != TrialPhase::per_size || samples == final_samples_.end() || !samples->second.covers(pairs))
      return pair_rounds();
    return std::max(0, pair_rounds() - samples->second.count);
  }

  // cross_pairs in pair mode: worker runs under `base`, each forcing the pairs in turn, until
  // pair_rounds() runs measured them; a pair's curve holds the median of the runs at each point.
  // For the per-size phase the halving's runs of that env count (they measured its pairs too):
  // those that ship are measured on the final grid at the halving's and the final iterations. A
  // pair NCCL did not offer at a size (its cost table held it ignored) is unavailable there, not
  // failed: its curve holds no time at that size, so it is never chosen there. A pair that failed
  // its own data check in any run has no curve, as a failed env trial has none. nullopt when a
  // run failed as a whole (one pair crashed or hung it): the caller measures each pair alone, as
  // without pair mode.
  std::optional<std::vector<PairCurve>> cross_pairs_in_process(const Env& base,
                                                               const std::vector<AlgoProto>& pairs,
                                                               TrialPhase phase) {
    const bool ships = phase == TrialPhase::per_size;
    PairSamples cross;
    PairSamples& samples = ships ? final_samples_[base] : cross;
    if (!samples.covers(pairs)) samples = {};
    for (int round = 0; samples.count < pair_rounds(); ++round) {
      TrialRequest r = request(base, phase, options_.final_grid,
                               ships ? options_.final_iterations : options_.screen_iterations, round);
      for (const auto& [algo, proto] : pairs) r.pairs.push_back({algo, proto});
      const TrialMeasurement m = run_trial(r);
      if (m.outcome != TrialOutcome::ok) return std::nullopt;
      samples.add(pairs, m, pairs.size(), 0);
    }
    return samples.curves(pairs);
  }

  // The pairs a halving run of `env` forces after measuring `env` itself: in pair mode, those of
  // the cross, unless `env` sets NCCL_ALGO/NCCL_PROTO (its pairs are measured under the rest).
  std::vector<AlgoProto> pairs_riding_along(const Env& env) const {
    const auto cross = pair_curves_.find(options_.carried);
    if (!options_.pair_mode || sets_algo_or_proto(env) || cross == pair_curves_.end()) return {};
    std::vector<AlgoProto> pairs;
    for (const PairCurve& c : cross->second) pairs.push_back(c.pair);
    return pairs;
  }

  // One halving measurement of `env`. In pair mode the same worker then forces the cross's pairs
  // under `env`, for no more communicators: what the per-size phase needs of a finalist is then
  // mostly measured (a run that fails as a whole measures `env` again alone).
  TrialMeasurement halving_trial(const Env& env, int iterations, int round) {
    const TrialRequest alone = request(env, TrialPhase::halving, options_.final_grid, iterations, round);
    const std::vector<AlgoProto> pairs = pairs_riding_along(env);
    if (pairs.empty() || !budget_left(static_cast<int>(pairs.size()) + 1)) return run_trial(alone);
    TrialRequest r = alone;
    r.pairs.push_back(kNcclOwnChoice);
    for (const auto& [algo, proto] : pairs) r.pairs.push_back({algo, proto});
    const TrialMeasurement m = run_trial(r);
    if (m.outcome != TrialOutcome::ok) return run_trial(alone);
    PairSamples& samples = final_samples_[env];
    if (!samples.covers(pairs)) samples = {};
    samples.add(pairs, m, r.pairs.size(), 1);
    return pair_points(m, r.pairs.size(), 0);
  }

  // Every NCCL_ALGO x NCCL_PROTO pair with nothing else set, and a derived candidate that allows
  // only the algorithms and protocols that are the fastest at some size, and those it must keep
  // to ship.
  void cross_algo_proto() {
    const Knob* algo = knob_named(kAlgo);
    const Knob* proto = knob_named(kProto);
    if (!algo || !proto) return;
    std::vector<AlgoProto> pairs;
    for (const auto& a : algo->values)
      for (const auto& p : proto->values)
        if (runs_for_some_collective(a, p) && !involves_broken({{kAlgo, a}, {kProto, p}}))
          pairs.emplace_back(a, p);
    const auto curves = cross_pairs(options_.carried, pairs, TrialPhase::cross);
    if (!curves || curves->empty()) return;
    pair_curves_[options_.carried] = *curves;
    std::map<std::string, std::set<std::string>> algos, protos;
    // One list per NCCL collective, for all its shapes (the env is process-wide): each shape's
    // fastest pairs are in it.
    for (const auto& [shaped_op, choices] : fastest_pair_per_size(*curves, {})) {
      const std::string& op = shaped_op.collective;
      for (const auto& choice : choices) {
        algos[op].insert(choice.algo);
        protos[op].insert(choice.proto);
      }
      // What a list must keep to ship (shippable_env.h): NCCL's own pair at the largest size,
      // and Simple below the sizes that prove it unneeded.
      if (const auto used = default_at_largest_.find(op); used != default_at_largest_.end()) {
        algos[op].insert(used->second.algo);
        protos[op].insert(used->second.proto);
      }
      if (options_.final_grid.max_bytes < kSimpleProvenFromBytes) protos[op].insert("Simple");
    }
    derived_.clear();
    for (const auto& [variable, names] : {std::pair{kAlgo, &algos}, std::pair{kProto, &protos}})
      if (std::string value = list_value(variable, *names, options_.scoped_lists); !value.empty())
        derived_[variable] = std::move(value);
    if (!derived_.empty() && budget_left() && !involves_broken(derived_))
      note(derived_, run_trial(screen_request(derived_, TrialPhase::cross)));
  }

  // The profile's per-size choices must hold under the env it ships with, and any other setting
  // can move the crossovers between pairs (GDR=SYS at x2.5 bandwidth moves Tree/LL -> Ring/LL128
  // from 132K to 331K). So when the finalist sets more than NCCL_ALGO/NCCL_PROTO, the pairs are
  // measured again under those settings: only the pairs that ran with nothing set and that the
  // finalist's own NCCL_ALGO/NCCL_PROTO allow (about 8 trials, none when the finalist is the
  // defaults or only a pair list). Before the confirmation, so its reserve of trials holds.
  // False when a pair that runs with nothing set fails under the finalist's settings: NCCL may
  // pick that pair at some size in a job with this env, so the finalist must not ship.
  bool pairs_hold_under(const Env& finalist) {
    const Env base = without_algo_proto(finalist);
    const auto measured = pair_curves_.find(options_.carried);
    if (base == options_.carried || measured == pair_curves_.end()) return true;
    std::vector<AlgoProto> pairs;
    for (const auto& c : measured->second)
      if (allows_any(finalist, c.pair, options_.collectives)) pairs.push_back(c.pair);
    planned_ += static_cast<int>(pairs.size());
    auto curves = cross_pairs(base, pairs, TrialPhase::per_size);
    if (!curves) return true;                         // cut short by the budget: per_size stays empty
    if (curves->size() < pairs.size()) return false;  // the failures are in result_.failed
    pair_curves_[base] = std::move(*curves);
    per_size_measured_.insert(base);
    return true;
  }

  // The fastest allowed pair per size, as measured under the chosen env; none when the pairs were
  // not all measured under it (the budget ran out), rather than choices measured under another.
  // With carried settings that did not ship, the pairs were measured under them only: they are
  // measured again under what did, while the budget allows. With env trials the cross's curves
  // stand in when the chosen env is the cross's (measuring again costs a communicator per pair);
  // in pair mode the per-size pairs are always those of the final grid's runs (cross_pairs_in_process).
  void choose_per_size() {
    const Env base = without_algo_proto(result_.env);
    const bool measured =
        options_.pair_mode ? per_size_measured_.count(base) > 0 : pair_curves_.count(base) > 0;
    if (!measured && pair_curves_.count(options_.carried) && budget_left()) {
      std::vector<AlgoProto> pairs;
      for (const auto& c : pair_curves_.at(options_.carried))
        if (allows_any(result_.env, c.pair, options_.collectives)) pairs.push_back(c.pair);
      if (auto curves = cross_pairs(base, pairs, TrialPhase::per_size);
          curves && curves->size() == pairs.size())
        pair_curves_[base] = std::move(*curves);
    }
    const auto curves = pair_curves_.find(without_algo_proto(result_.env));
    result_.per_size.clear();
    if (curves != pair_curves_.end()) result_.per_size = fastest_pair_per_size(curves->second, result_.env);
  }

  // Each knob's values that beat the defaults beyond noise on their own, best first.
  HelpfulValues helpful_values() const {
    std::vector<std::pair<std::string, Candidate>> singles;
    for (const auto& c : screened_) {
      const std::optional<std::string> knob = screened_knob(c.env);
      if (!knob || c.score.value <= 1 + result_.noise || adds_nothing(c)) continue;
      singles.emplace_back(*knob, c);
    }
    std::stable_sort(singles.begin(), singles.end(),
                     [](const auto& a, const auto& b) { return better(a.second.score, b.second.score); });
    HelpfulValues helpful;
    for (const auto& [knob, c] : singles) helpful[knob].push_back(c);
    return helpful;
  }

  // One crossed env, measured on the screening grid and noted; false when it failed.
  bool cross(const Env& env) {
    const TrialMeasurement m = run_trial(screen_request(env, TrialPhase::cross));
    note(env, m);
    return m.outcome == TrialOutcome::ok;
  }

  // The best value of each knob that beat the defaults beyond noise, the top few crossed in a
  // full factorial (with the derived NCCL_ALGO/NCCL_PROTO pair as one more factor); a crossed env
  // that failed is tried again with the next helpful values of its knobs. Only failures cost
  // those retries, and only knobs with a second value that beat the noise have any.
  void cross_knobs_that_matter() {
    const HelpfulValues helpful = helpful_values();
    std::vector<Candidate> factors;
    for (const auto& [name, values] : helpful) factors.push_back(values.front());
    for (const auto& c : screened_)
      if (c.env == derived_ && !derived_.empty() && c.score.value > 1 + result_.noise) factors.push_back(c);
    std::sort(factors.begin(), factors.end(),
              [](const Candidate& a, const Candidate& b) { return a.score.value > b.score.value; });
    // The derived list may be a screened value too (NCCL_ALGO=Ring both ways): one factor.
    std::vector<Candidate> distinct;
    for (const Candidate& c : factors)
      if (std::none_of(distinct.begin(), distinct.end(), [&](const Candidate& d) { return d.env == c.env; }))
        distinct.push_back(c);
    factors = std::move(distinct);
    if (factors.size() > static_cast<size_t>(options_.cross_knobs))
      factors.resize(static_cast<size_t>(options_.cross_knobs));
    // The settings carried from another node count are what this run confirms: crossed with the
    // rest whenever they beat the noise here, outside the count of factors.
    for (const auto& c : screened_)
      if (c.env == options_.carried && !options_.carried.empty() && c.score.value > 1 + result_.noise) {
        if (std::none_of(factors.begin(), factors.end(), [&](const Candidate& f) { return f.env == c.env; }))
          factors.push_back(c);
        break;
      }
    // Factors that set the same variable cannot be combined (the derived pair vs a single ALGO).
    const size_t n = factors.size();
    std::vector<Env> failed;
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
      if (std::popcount(mask) < 2) continue;
      Env env;
      bool clash = false;
      for (size_t i = 0; i < n; ++i) {
        if (!(mask & (1u << i))) continue;
        for (const auto& [name, value] : factors[i].env) clash |= env.count(name) > 0;
        env = merged(env, factors[i].env);
      }
      if (clash || involves_broken(env)) continue;
      if (!budget_left()) return;
      if (!cross(env)) failed.push_back(env);
    }
    // NCCL_ALGO/NCCL_PROTO are not walked: their screened single values were never measured as
    // pairs, and the derived list is no screened value.
    for (const auto& env : failed)
      for (const auto& setting : env)
        if (setting.first != kAlgo && setting.first != kProto &&
            !cross_next_values(env, setting.first, helpful))
          return;
  }

  // A crossed env that failed may owe it to any one of its knobs' best values: walk `name` down
  // its helpful values, the others kept, until one crosses (GDR=SYS with QPS=8 crashes: try
  // GDR=SYS with QPS=4). False when the budget ran out.
  bool cross_next_values(Env env, const std::string& name, const HelpfulValues& helpful) {
    for (auto next = next_helpful_value(helpful, name, env.at(name)); next;
         next = next_helpful_value(helpful, name, *next)) {
      if (!budget_left()) return false;
      env[name] = *next;
      ++planned_;
      if (cross(env)) break;
    }
    return true;
  }

  // The finalists as they may ship (shippable_env.h): a list that would restrict NCCL beyond the
  // measured sizes leaves the env, and the rest of that finalist is what the confirmation
  // measures. Finalists that become alike are kept once; the notes say what the best finalist
  // lost (its per-size choices stay in per_size).
  std::vector<Candidate> shippable(const std::vector<Candidate>& finalists) {
    ShipFacts facts;
    facts.largest_measured = options_.final_grid.max_bytes;
    facts.collectives = options_.collectives;
    facts.default_at_largest = default_at_largest_;
    facts.corrupt_pairs = corrupt_pairs(result_.failed);
    facts.empty_filter_fails = options_.scoped_lists;  // both since NCCL 2.24
    std::vector<Candidate> kept;
    for (const Candidate& finalist : finalists) {
      ShippableEnv shipped = shippable_env(finalist.env, facts);
      if (&finalist == &finalists.front()) result_.notes = shipped.notes;
      if (std::any_of(kept.begin(), kept.end(), [&](const Candidate& k) { return k.env == shipped.env; }))
        continue;
      if (shipped.env.empty()) continue;  // nothing left that the defaults lack
      kept.push_back({shipped.env, finalist.score});
    }
    return kept;
  }

  // Successive halving on the final grid: the best candidates and the defaults, measured again
  // with more sizes and iterations each round; the better half goes on. Returns the survivor
  // first, then the candidates it beat, the last round's first (the confirmation's fallbacks).
  std::vector<Candidate> halve() {
    std::vector<Candidate> field;
    for (const auto& c : screened_)
      if (c.score.value > 1 + result_.noise && !adds_nothing(c)) field.push_back(c);
    std::sort(field.begin(), field.end(),
              [](const Candidate& a, const Candidate& b) { return better(a.score, b.score); });
    std::vector<Candidate> unique;
    for (const auto& c : field)
      if (std::none_of(unique.begin(), unique.end(), [&](const Candidate& u) { return u.env == c.env; }))
        unique.push_back(c);
    if (unique.size() > static_cast<size_t>(options_.halving_candidates))
      unique.resize(static_cast<size_t>(options_.halving_candidates));
    int iterations = std::max(options_.screen_iterations, options_.final_iterations / 2);
    int round = 0;
    std::vector<Candidate> beaten;
    while (unique.size() > 1 && budget_left(static_cast<int>(unique.size()) + 1)) {
      const TrialMeasurement baseline = halving_trial({}, iterations, round);
      if (baseline.outcome != TrialOutcome::ok) break;
      std::vector<Candidate> measured;
      for (const auto& c : unique) {
        const TrialMeasurement m = halving_trial(c.env, iterations, round);
        if (m.outcome != TrialOutcome::ok || m.busbw.size() != baseline.busbw.size()) continue;
        measured.push_back({c.env, score_against(baseline.busbw, m.busbw, m.sizes)});
      }
      std::sort(measured.begin(), measured.end(),
                [](const Candidate& a, const Candidate& b) { return better(a.score, b.score); });
      const auto half = measured.begin() + static_cast<std::ptrdiff_t>((measured.size() + 1) / 2);
      beaten.insert(beaten.begin(), half, measured.end());
      measured.erase(half, measured.end());
      unique = measured;
      iterations = options_.final_iterations;
      ++round;
    }
    unique.insert(unique.end(), beaten.begin(), beaten.end());
    prefer_fewer_settings(unique);
    return unique;
  }

  // A setting must earn its place: when a candidate that sets a part of the survivor's settings
  // scored within the noise of the survivor, the extra settings measured nothing but noise (a
  // no-op knob crossed with the ones that matter), and the smaller candidate goes first. Extra
  // NCCL_ALGO/NCCL_PROTO lists are left to the confirmation, which measures the survivor without
  // them in every round.
  void prefer_fewer_settings(std::vector<Candidate>& ranked) const {
    if (ranked.size() < 2) return;
    const Candidate& survivor = ranked.front();
    auto smallest = ranked.begin();
    for (auto c = ranked.begin() + 1; c != ranked.end(); ++c) {
      const bool part = c->env.size() < smallest->env.size() &&
                        std::includes(survivor.env.begin(), survivor.env.end(), c->env.begin(), c->env.end());
      const bool lists_kept = c->env.count(kAlgo) == survivor.env.count(kAlgo) &&
                              c->env.count(kProto) == survivor.env.count(kProto);
      if (part && lists_kept && c->score.acceptable && c->score.value * (1 + result_.noise) >= survivor.score.value)
        smallest = c;
    }
    std::rotate(ranked.begin(), smallest, smallest + 1);
  }

  // Interleaved A/B rounds of the defaults (A) and the best finalist (B) on the final grid. A
  // finalist that fails a round (a guard it turns into wrong data, a crash the shorter trials
  // never met) is dropped for the next, while the budget holds another confirmation.
  void confirm(const std::vector<Candidate>& finalists) {
    if (finalists.empty()) {
      confirm_against_defaults({}, 0);
      return;
    }
    for (std::size_t i = 0; i < finalists.size(); ++i) {
      if (i > 0 && !budget_left(2 * options_.confirm_rounds)) break;
      if (confirm_against_defaults(finalists[i].env, static_cast<int>(i)) != Confirmation::winner_failed)
        return;
    }
  }

  enum class Confirmation { done, winner_failed };

  // The envs a winner's lists are measured against in the confirmation: the winner without each of
  // NCCL_ALGO and NCCL_PROTO, when something is left (without anything, the defaults are that env).
  static std::vector<Env> list_ablations(const Env& winner) {
    std::vector<Env> arms;
    for (const char* variable : {kAlgo, kProto}) {
      if (!winner.count(variable)) continue;
      Env without = winner;
      without.erase(variable);
      if (!without.empty()) arms.push_back(std::move(without));
    }
    return arms;
  }

  using CurveOf = std::function<std::optional<std::vector<double>>(const Env&)>;

  // `winner` less each list that gives nothing over the winner without it (measured in the
  // confirmation's rounds, `curve_of`); when both would leave, only the one that gives less (the
  // env without both was not measured). Notes and `verdict` say what left.
  Env without_lists_that_give_nothing(const Env& winner, const std::vector<double>& winner_curve,
                                      const TrialMeasurement& points, const CurveOf& curve_of,
                                      std::string& verdict) {
    struct ListGain {
      const char* variable;
      Score gain;
    };
    std::vector<ListGain> idle;
    for (const char* variable : {kAlgo, kProto}) {
      if (!winner.count(variable)) continue;
      Env without = winner;
      without.erase(variable);
      const auto base = curve_of(without);
      if (!base) continue;
      TrialMeasurement measured_without = points;
      measured_without.busbw = *base;
      const Score gain = score_against(measured_without, winner_curve);
      if (!gain.acceptable || gain.value <= 1 + result_.noise) idle.push_back({variable, gain});
    }
    if (idle.size() == 2 && !curve_of(without_algo_proto(winner)))
      idle.erase(better(idle[0].gain, idle[1].gain) ? idle.begin() : idle.begin() + 1);
    Env shipped = winner;
    for (const ListGain& g : idle) {
      shipped.erase(g.variable);
      verdict += std::string("; ") + g.variable + " " + signed_percent(g.gain.value - 1) +
                 " over the rest, not shipped";
      result_.notes.push_back(
          std::string(g.variable) + "=" + winner.at(g.variable) + " is not in env: it gave " +
          signed_percent(g.gain.value - 1) + " over the rest of " + describe_env(winner) + " (noise " +
          percent(result_.noise) + "); its per-size choices stay in per_size, for the tuner plugin");
    }
    return shipped;
  }

  Confirmation confirm_against_defaults(const Env& winner, int attempt) {
    // A list is a filter: NCCL still chooses among what it allows, so one that only restates its
    // own choices gives nothing (and can enable a protocol NCCL had turned off). The winner
    // without each of its lists runs in every round too, and a list ships only when the winner
    // beats the same env without it beyond the noise.
    const std::vector<Env> arms = list_ablations(winner);
    std::vector<std::vector<std::vector<double>>> arm_runs(arms.size());
    std::vector<bool> arm_failed(arms.size(), false);
    std::vector<std::vector<double>> a_runs, b_runs;
    TrialMeasurement points;  // the points every A run measured
    bool winner_failed = false;
    const int rounds = std::max(1, options_.confirm_rounds);
    for (int round = 0; round < rounds && !winner_failed; ++round) {
      const int repeat = attempt * rounds + round;
      const TrialMeasurement a = run_trial(
          request({}, TrialPhase::confirm, options_.final_grid, options_.final_iterations, repeat, true));
      if (a.outcome == TrialOutcome::ok) {
        a_runs.push_back(a.busbw);
        points = a;
      }
      if (winner.empty()) continue;
      const TrialMeasurement b = run_trial(
          request(winner, TrialPhase::confirm, options_.final_grid, options_.final_iterations, repeat, true));
      if (b.outcome == TrialOutcome::ok && b.busbw.size() == a.busbw.size())
        b_runs.push_back(b.busbw);
      else if (b.outcome != TrialOutcome::ok)
        winner_failed = true;
      for (std::size_t i = 0; i < arms.size() && !winner_failed; ++i) {
        if (arm_failed[i]) continue;
        const TrialMeasurement c = run_trial(request(arms[i], TrialPhase::confirm, options_.final_grid,
                                                     options_.final_iterations, repeat, true));
        if (c.outcome == TrialOutcome::ok && c.busbw.size() == a.busbw.size())
          arm_runs[i].push_back(c.busbw);
        else
          arm_failed[i] = true;  // the list is what lets the rest run
      }
    }
    result_.ops = point_ops(points);
    result_.sizes = points.sizes;
    points.busbw = result_.baseline_busbw = mean_curve(a_runs);
    result_.tuned_busbw = result_.baseline_busbw;
    result_.score = score_against(points, result_.baseline_busbw);
    if (a_runs.empty()) {
      result_.confirmation = "the defaults failed during confirmation; keeping them";
      return Confirmation::done;
    }
    if (winner.empty()) {
      result_.confirmation = !rejected_.empty() ? rejected_ + "; keeping the defaults"
                                                : "no candidate beat the defaults beyond the noise floor (" +
                                                      percent(result_.noise) + ")";
      return Confirmation::done;
    }
    if (winner_failed || b_runs.size() != a_runs.size()) {
      result_.confirmation = describe_env(winner) + " failed during confirmation; keeping the defaults";
      return winner_failed ? Confirmation::winner_failed : Confirmation::done;
    }
    const std::vector<double> winner_curve = mean_curve(b_runs);
    std::string lists_verdict;
    // The curve of `env` as measured in these rounds: the winner's, an arm's or the defaults'.
    const CurveOf curve_of = [&](const Env& env) -> std::optional<std::vector<double>> {
      if (env == winner) return winner_curve;
      if (env.empty()) return points.busbw;
      for (std::size_t i = 0; i < arms.size(); ++i)
        if (arms[i] == env && !arm_failed[i] && arm_runs[i].size() == a_runs.size())
          return mean_curve(arm_runs[i]);
      return std::nullopt;
    };
    const Env shipped =
        without_lists_that_give_nothing(winner, winner_curve, points, curve_of, lists_verdict);
    const auto shipped_curve = curve_of(shipped);
    const std::vector<double> tuned = *shipped_curve;
    const Score s = score_against(points, tuned);
    const std::string summary = "A/B " + std::to_string(a_runs.size()) + " rounds: " + describe_env(shipped) +
                                " " + signed_percent(s.value - 1) + " (worst size " +
                                signed_percent(s.worst_ratio - 1) + ", noise " + percent(result_.noise) +
                                ")" + lists_verdict;
    if (!shipped.empty() && s.acceptable && s.value > 1 + result_.noise) {
      result_.env = shipped;
      result_.keep_defaults = false;
      result_.tuned_busbw = tuned;
      result_.score = s;
      result_.confirmation = summary + ": confirmed";
    } else {
      result_.confirmation = summary + ": not confirmed, keeping the defaults";
    }
    return Confirmation::done;
  }

  static std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
    return buf;
  }
  static std::string signed_percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * fraction);
    return buf;
  }

  const SearchSpace& space_;
  const StrategyOptions& options_;
  const TrialExecutor& execute_;
  const ProgressCallback& progress_;
  std::function<double()> clock_;
  double start_s_ = 0;
  StrategyResult result_;
  std::vector<std::uint64_t> screen_sizes_;
  std::vector<double> screen_baseline_;
  std::vector<Candidate> screened_;
  std::set<std::string> broken_;  // "NAME=value" settings that failed on their own
  Env derived_;
  std::string rejected_;  // why the best finalist could not ship, when none could
  std::map<Env, std::vector<PairCurve>> pair_curves_;  // NCCL_ALGO x NCCL_PROTO curves by what else was set
  std::set<Env> per_size_measured_;                    // the keys of pair_curves_ the per-size phase measured
  std::map<Env, PairSamples> final_samples_;           // pair mode: the halving's and per-size runs' pairs
  std::map<std::string, NcclChoice> default_at_largest_;  // by collective: NCCL's pick there, unset
  int planned_ = 0;
  int measured_ = 0;
  double measured_s_ = 0;
  double final_trial_s_ = 0;
  double best_gain_ = 1;
};

}  // namespace

StrategyResult run_strategy(const SearchSpace& space, const StrategyOptions& options,
                            const TrialExecutor& execute, const ProgressCallback& progress) {
  return Search(space, options, execute, progress).run();
}

}  // namespace nccltune
