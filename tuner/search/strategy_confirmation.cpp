// The strategy's confirmation: the winner against the defaults in interleaved rounds, and the
// winner without each of its lists (strategy_search.h).
#include "search/strategy_search.h"

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

namespace nccltune::strategy_search {

void Search::confirm(const std::vector<Candidate>& finalists) {
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

std::vector<Env> Search::list_ablations(const Env& winner) {
  std::vector<Env> arms;
  for (const char* variable : {kAlgo, kProto}) {
    if (!winner.count(variable)) continue;
    Env without = winner;
    without.erase(variable);
    if (!without.empty()) arms.push_back(std::move(without));
  }
  return arms;
}

Env Search::without_lists_that_give_nothing(const Env& winner, const std::vector<double>& winner_curve,
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

Search::Confirmation Search::confirm_against_defaults(const Env& winner, int attempt) {
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

std::string Search::percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

std::string Search::signed_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * fraction);
  return buf;
}

}  // namespace nccltune::strategy_search
