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

#include "base/statistics.h"
#include "profile/nccl_names.h"
#include "search/shippable_env.h"
#include "search/strategy_search.h"

namespace nccltune {
namespace strategy_search {

bool Search::budget_left(int trials_needed) const {
  if (options_.max_trials > 0 && result_.trials + trials_needed + reserve_trials() > options_.max_trials)
    return false;
  return elapsed() + trials_needed * mean_trial_s() + reserve_seconds() <
         static_cast<double>(options_.budget.count());
}

TrialMeasurement Search::run_trial(TrialRequest request) {
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

void Search::note_failed_pairs(const TrialRequest& request, const TrialMeasurement& m) {
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

bool Search::involves_broken(const Env& env) const {
  for (const auto& [name, value] : env)
    if (broken_.count(name + "=" + value)) return true;
  return false;
}

TrialRequest Search::request(Env env, TrialPhase phase, const SizeGrid& grid, int iterations, int repeat,
                     bool guarded) const {
  TrialRequest r{std::move(env),       phase, grid, iterations, options_.warmup, repeat,
                 options_.collectives, {},    {},   comm_names(options_.comms), {}};
  if (guarded) r.collectives.insert(r.collectives.end(), options_.guards.begin(), options_.guards.end());
  return r;
}

Score Search::score_against(const std::vector<double>& baseline, const std::vector<double>& candidate,
                    const std::vector<std::uint64_t>& sizes) const {
  std::vector<std::size_t> s(sizes.begin(), sizes.end());
  return score(options_.objective, s, baseline, candidate, options_.tolerance);
}

Score Search::score_against(const TrialMeasurement& baseline, const std::vector<double>& candidate) const {
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

void Search::note(const Env& env, const TrialMeasurement& m) {
  if (m.outcome != TrialOutcome::ok || m.busbw.size() != screen_baseline_.size()) return;
  const Score s = score_against(screen_baseline_, m.busbw, m.sizes);
  screened_.push_back({env, s});
  if (s.acceptable) best_gain_ = std::max(best_gain_, s.value);
}

bool Search::measure_baseline() {
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
  // The noise floor on the scale the decisions use (base/statistics.h's rule): how far each
  // repeat of the defaults scores from their median, on the objective's sizes.
  std::vector<double> scores;
  for (const auto& repeat : repeats)
    scores.push_back(score_against(screen_baseline_, repeat, screen_sizes_).value);
  result_.noise = noise_of_repeats(scores);
  return true;
}

double Search::final_cost_ratio() const {
  const double sizes = static_cast<double>(grid_sizes(options_.final_grid).size()) /
                       static_cast<double>(std::max<size_t>(1, grid_sizes(options_.screen_grid).size()));
  const double iterations = static_cast<double>(options_.final_iterations + options_.warmup) /
                            static_cast<double>(std::max(1, options_.screen_iterations + options_.warmup));
  return std::max(1.0, sizes * iterations);
}

void Search::screen() {
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

std::optional<std::string> Search::screened_knob(const Env& env) const {
  if (env.size() == 1) return env.begin()->first;
  if (env.size() != 2) return std::nullopt;
  for (const auto& [name, value] : env) {
    const Knob* knob = knob_named(name.c_str());
    if (knob && !knob->with.empty() && knob->with != name && env.count(knob->with)) return knob->with;
  }
  return std::nullopt;
}

const Knob* Search::knob_named(const char* name) const {
  for (const auto& knob : space_.knobs)
    if (knob.name == name) return &knob;
  return nullptr;
}

}  // namespace strategy_search

StrategyResult run_strategy(const SearchSpace& space, const StrategyOptions& options,
                            const TrialExecutor& execute, const ProgressCallback& progress) {
  return strategy_search::Search(space, options, execute, progress).run();
}

}  // namespace nccltune
