// The strategy's search (search/strategy.h), for the files that define its steps: one class,
// its state the search's, with the steps in files of their own: the accounting, the defaults'
// repeats and the screen (strategy.cpp), the NCCL_ALGO x NCCL_PROTO pairs (strategy_pairs.cpp),
// the cross of knobs and the successive halving (strategy_halving.cpp) and the confirmation
// against the defaults (strategy_confirmation.cpp). Nothing outside these files includes it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/statistics.h"
#include "profile/nccl_names.h"
#include "search/objective.h"
#include "search/shippable_env.h"
#include "search/strategy.h"

namespace nccltune::strategy_search {

constexpr const char* kAlgo = "NCCL_ALGO";
constexpr const char* kProto = "NCCL_PROTO";

struct Candidate {
  Env env;
  Score score;
};

inline bool better(const Score& a, const Score& b) {
  if (a.acceptable != b.acceptable) return a.acceptable;
  return a.value > b.value;
}

inline Env merged(const Env& a, const Env& b) {
  Env out = a;
  out.insert(b.begin(), b.end());
  return out;
}

// Each knob's values that beat the defaults beyond noise on their own (or with a knob that acts
// only with them, search_space.h's `with`), best first.
using HelpfulValues = std::map<std::string, std::vector<Candidate>>;

// The value after `value` in `name`'s helpful values; none past the last or for other values
// (an NCCL_ALGO/NCCL_PROTO list derived from the pair cross is no screened value).
inline std::optional<std::string> next_helpful_value(const HelpfulValues& helpful, const std::string& name,
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
inline bool allows(const Env& env, const AlgoProto& pair, const std::string& op) {
  const auto nvls = env.find("NCCL_NVLS_ENABLE");
  if (nvls != env.end() && nvls->second == "0" && (pair.first == "NVLS" || pair.first == "NVLSTree")) return false;
  return env_allows(env, kAlgo, pair.first, op) && env_allows(env, kProto, pair.second, op);
}

// Whether `env` lets NCCL use `pair` for some collective of `ops`.
inline bool allows_any(const Env& env, const AlgoProto& pair, const std::vector<std::string>& ops) {
  return std::any_of(ops.begin(), ops.end(), [&](const std::string& op) { return allows(env, pair, op); });
}

inline std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// Whether `names` are every name NCCL has for `variable`: such a list filters nothing (NCCL's own
// choice always stays), and for NCCL_PROTO it would turn on LL128 where NCCL leaves it off.
inline bool names_everything(const char* variable, const std::set<std::string>& names) {
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
inline std::string list_value(const char* variable, const std::map<std::string, std::set<std::string>>& by_op,
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

inline bool sets_algo_or_proto(const Env& env) {
  return env.count(kAlgo) > 0 || env.count(kProto) > 0;
}

// What the pairs of an env are measured under: the env less its NCCL_ALGO and NCCL_PROTO.
inline Env without_algo_proto(Env env) {
  env.erase(kAlgo);
  env.erase(kProto);
  return env;
}

// Per collective, at each measured size, the fastest of the pairs that `env` allows (and that
// NCCL offered there: pair mode leaves no time where it did not, and a pair's env trial measures
// only the collectives NCCL runs it for).
inline std::map<ShapedOp, std::vector<SizeChoice>> fastest_pair_per_size(
    const std::vector<PairCurve>& curves, const Env& env) {
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
  bool budget_left(int trials_needed = 1) const;
  double mean_trial_s() const { return measured_ > 0 ? measured_s_ / measured_ : 0.0; }

  TrialMeasurement run_trial(TrialRequest request);

  // Pair mode: a run that failed as a whole (a crash, a hang, init) is one failure of its env,
  // since which pair caused it is unknown (cross_pairs measures them again as env trials). Each
  // pair that failed its own data check is recorded as the env trial of that pair would have
  // been (the env plus NCCL_ALGO and NCCL_PROTO), so that shippable_env's corrupt pairs and the
  // failed list read the same either way.
  void note_failed_pairs(const TrialRequest& request, const TrialMeasurement& m);

  bool involves_broken(const Env& env) const;

  // A trial of the tuned collectives; `guarded` adds the guards (the defaults' repeats and the
  // confirmation).
  TrialRequest request(Env env, TrialPhase phase, const SizeGrid& grid, int iterations, int repeat,
                       bool guarded = false) const;
  TrialRequest screen_request(Env env, TrialPhase phase, int repeat = 0) const {
    return request(std::move(env), phase, options_.screen_grid, options_.screen_iterations, repeat);
  }

  Score score_against(const std::vector<double>& baseline, const std::vector<double>& candidate,
                      const std::vector<std::uint64_t>& sizes) const;

  // The score over the tuned collectives' points; a guard's points (when measured) only count
  // against: a size of one slower than the tolerance makes the score unacceptable.
  Score score_against(const TrialMeasurement& baseline, const std::vector<double>& candidate) const;

  void note(const Env& env, const TrialMeasurement& m);

  bool measure_baseline();

  // How much more a final-grid trial costs than a screening one, for budgeting.
  double final_cost_ratio() const;

  void screen();

  bool runs_for_some_collective(const std::string& algo, const std::string& proto) const;

  // Whether NCCL_ALGO=`value` leaves each tuned collective some algorithm NCCL runs it with: a
  // single name that does not (NCCL_ALGO=Tree with all_gather tuned) fails that collective's
  // calls on NCCL 2.24+, so its screen could only fail. Lists and exclusions are screened.
  bool leaves_every_collective_an_algorithm(const std::string& value) const;

  // A knob screened on top of another's value (`with`) that did not beat that value alone beyond
  // noise: what it measured is the other knob's gain, and it is no candidate of its own.
  bool adds_nothing(const Candidate& c) const;

  // The knob a screened env is a value of: its one variable, or for a knob screened on top of
  // another (`with`), that other one. None for crossed envs.
  std::optional<std::string> screened_knob(const Env& env) const;

  const Knob* knob_named(const char* name) const;

  // `pairs` under `base` on the final grid: the curves of those that ran, or none when the budget
  // ends the cross early (the fastest of some pairs may be slower than one never measured).
  std::optional<std::vector<PairCurve>> cross_pairs(const Env& base, const std::vector<AlgoProto>& pairs,
                                                    TrialPhase phase);

  int pair_rounds() const { return std::max(1, options_.pair_rounds); }

  // The runs cross_pairs_in_process would start: for the per-size phase, fewer by those of the
  // halving that measured these pairs under `base`.
  int pair_runs_needed(const Env& base, const std::vector<AlgoProto>& pairs, TrialPhase phase) const;

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
                                                               TrialPhase phase);

  // The pairs a halving run of `env` forces after measuring `env` itself: in pair mode, those of
  // the cross, unless `env` sets NCCL_ALGO/NCCL_PROTO (its pairs are measured under the rest).
  std::vector<AlgoProto> pairs_riding_along(const Env& env) const;

  // One halving measurement of `env`. In pair mode the same worker then forces the cross's pairs
  // under `env`, for no more communicators: what the per-size phase needs of a finalist is then
  // mostly measured (a run that fails as a whole measures `env` again alone).
  TrialMeasurement halving_trial(const Env& env, int iterations, int round);

  // Every NCCL_ALGO x NCCL_PROTO pair with nothing else set, and a derived candidate that allows
  // only the algorithms and protocols that are the fastest at some size, and those it must keep
  // to ship.
  void cross_algo_proto();

  // The profile's per-size choices must hold under the env it ships with, and any other setting
  // can move the crossovers between pairs (GDR=SYS at x2.5 bandwidth moves Tree/LL -> Ring/LL128
  // from 132K to 331K). So when the finalist sets more than NCCL_ALGO/NCCL_PROTO, the pairs are
  // measured again under those settings: only the pairs that ran with nothing set and that the
  // finalist's own NCCL_ALGO/NCCL_PROTO allow (about 8 trials, none when the finalist is the
  // defaults or only a pair list). Before the confirmation, so its reserve of trials holds.
  // False when a pair that runs with nothing set fails under the finalist's settings: NCCL may
  // pick that pair at some size in a job with this env, so the finalist must not ship.
  bool pairs_hold_under(const Env& finalist);

  // The fastest allowed pair per size, as measured under the chosen env; none when the pairs were
  // not all measured under it (the budget ran out), rather than choices measured under another.
  // With carried settings that did not ship, the pairs were measured under them only: they are
  // measured again under what did, while the budget allows. With env trials the cross's curves
  // stand in when the chosen env is the cross's (measuring again costs a communicator per pair);
  // in pair mode the per-size pairs are always those of the final grid's runs (cross_pairs_in_process).
  void choose_per_size();

  // result_.switches: where each per-size choice takes over between two final-grid sizes
  // (search/crossover_refinement.h), from `curves` (those per_size was chosen from), measured
  // again around each crossing in pair mode.
  void locate_switches(const Env& base, const std::vector<PairCurve>& curves);

  // Each knob's values that beat the defaults beyond noise on their own, best first.
  HelpfulValues helpful_values() const;

  // One crossed env, measured on the screening grid and noted; false when it failed.
  bool cross(const Env& env);

  // The best value of each knob that beat the defaults beyond noise, the top few crossed in a
  // full factorial (with the derived NCCL_ALGO/NCCL_PROTO pair as one more factor); a crossed env
  // that failed is tried again with the next helpful values of its knobs. Only failures cost
  // those retries, and only knobs with a second value that beat the noise have any.
  void cross_knobs_that_matter();

  // A crossed env that failed may owe it to any one of its knobs' best values: walk `name` down
  // its helpful values, the others kept, until one crosses (GDR=SYS with QPS=8 crashes: try
  // GDR=SYS with QPS=4). False when the budget ran out.
  bool cross_next_values(Env env, const std::string& name, const HelpfulValues& helpful);

  // The finalists as they may ship (shippable_env.h): a list that would restrict NCCL beyond the
  // measured sizes leaves the env, and the rest of that finalist is what the confirmation
  // measures. Finalists that become alike are kept once; the notes say what the best finalist
  // lost (its per-size choices stay in per_size).
  std::vector<Candidate> shippable(const std::vector<Candidate>& finalists);

  // Successive halving on the final grid: the best candidates and the defaults, measured again
  // with more sizes and iterations each round; the better half goes on. Returns the survivor
  // first, then the candidates it beat, the last round's first (the confirmation's fallbacks).
  std::vector<Candidate> halve();

  // A setting must earn its place: when a candidate that sets a part of the survivor's settings
  // scored within the noise of the survivor, the extra settings measured nothing but noise (a
  // no-op knob crossed with the ones that matter), and the smaller candidate goes first. Extra
  // NCCL_ALGO/NCCL_PROTO lists are left to the confirmation, which measures the survivor without
  // them in every round.
  void prefer_fewer_settings(std::vector<Candidate>& ranked) const;

  // Interleaved A/B rounds of the defaults (A) and the best finalist (B) on the final grid. A
  // finalist that fails a round (a guard it turns into wrong data, a crash the shorter trials
  // never met) is dropped for the next, while the budget holds another confirmation.
  void confirm(const std::vector<Candidate>& finalists);

  enum class Confirmation { done, winner_failed };

  // The envs a winner's lists are measured against in the confirmation: the winner without each of
  // NCCL_ALGO and NCCL_PROTO, when something is left (without anything, the defaults are that env).
  static std::vector<Env> list_ablations(const Env& winner);

  using CurveOf = std::function<std::optional<std::vector<double>>(const Env&)>;

  // `winner` less each list that gives nothing over the winner without it (measured in the
  // confirmation's rounds, `curve_of`); when both would leave, only the one that gives less (the
  // env without both was not measured). Notes and `verdict` say what left.
  Env without_lists_that_give_nothing(const Env& winner, const std::vector<double>& winner_curve,
                                      const TrialMeasurement& points, const CurveOf& curve_of,
                                      std::string& verdict);

  Confirmation confirm_against_defaults(const Env& winner, int attempt);

  static std::string percent(double fraction);
  static std::string signed_percent(double fraction);

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

}  // namespace nccltune::strategy_search
