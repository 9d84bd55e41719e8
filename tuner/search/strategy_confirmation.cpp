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

#include "base/byte_size.h"
#include "base/statistics.h"
#include "profile/nccl_names.h"
#include "search/fitted_loss.h"
#include "search/shippable_env.h"

namespace nccltune::strategy_search {

namespace {

struct WorstBetween {
  ShapedOp op;
  FittedLoss loss;
  bool measured = false;  // at a measured size between the grid's, not by the fits
};

// The worst ratio of `candidate` to the defaults (`points`' busbw) between the grid's sizes of
// every collective on every communicator, guards included: measured at the points that are not
// the grid's (`on_grid` false), and by the fitted costs between every two measured sizes
// (fitted_loss.h). A fitted loss is said at the size inside its gap, a measured one at its point.
std::optional<WorstBetween> worst_between(const TrialMeasurement& points, const std::vector<double>& candidate,
                                          const std::vector<bool>& on_grid) {
  std::map<ShapedOp, std::vector<std::size_t>> by_op;  // point indices, in the sweep's ascending order
  const std::vector<ShapedOp> ops = point_ops(points);
  for (std::size_t i = 0; i < ops.size() && i < points.sizes.size(); ++i) by_op[ops[i]].push_back(i);
  std::optional<WorstBetween> worst;
  for (const auto& entry : by_op) {
    const ShapedOp& op = entry.first;  // a name, not a structured binding: lambdas capture it
    std::vector<std::uint64_t> sizes;
    std::vector<double> base, cand;
    std::vector<bool> measured_between;  // per kept point: not the grid's
    for (const std::size_t i : entry.second) {
      if (i >= points.busbw.size() || i >= candidate.size()) continue;
      sizes.push_back(points.sizes[i]);
      base.push_back(points.busbw[i]);
      cand.push_back(candidate[i]);
      measured_between.push_back(i < on_grid.size() && !on_grid[i]);
    }
    const auto take = [&](const FittedLoss& loss, bool measured) {
      if (!worst || loss.ratio < worst->loss.ratio) worst = WorstBetween{op, loss, measured};
    };
    if (const auto fitted = worst_fitted_between(sizes, base, cand)) take(*fitted, false);
    for (std::size_t k = 1; k + 1 < sizes.size(); ++k)
      if (measured_between[k] && base[k] > 0) take({sizes[k - 1], sizes[k + 1], sizes[k], cand[k] / base[k]}, true);
  }
  return worst;
}

// "all_reduce", or "all_reduce on the rail communicator".
std::string describe_op(const ShapedOp& op) {
  return op.role == CommRole::world ? op.collective
                                    : op.collective + " on the " + std::string(to_string(op.role)) + " communicator";
}

}  // namespace

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
  // The final grid and the sizes between its points (fitted_loss.h): a setting must not lose there
  // either. Only the grid's points are the profile's results, as before.
  const std::vector<std::uint64_t> grid = grid_sizes(options_.final_grid);
  std::vector<std::uint64_t> requested = between_grid_sizes(grid);
  requested.insert(requested.end(), grid.begin(), grid.end());
  std::sort(requested.begin(), requested.end());
  const auto confirm_request = [&](const Env& env, int repeat) {
    TrialRequest r = request(env, TrialPhase::confirm, options_.final_grid, options_.final_iterations, repeat, true);
    r.sizes = requested;
    return r;
  };
  for (int round = 0; round < rounds && !winner_failed; ++round) {
    const int repeat = attempt * rounds + round;
    const TrialMeasurement a = run_trial(confirm_request({}, repeat));
    if (a.outcome == TrialOutcome::ok) {
      a_runs.push_back(a.busbw);
      points = a;
    }
    if (winner.empty()) continue;
    const TrialMeasurement b = run_trial(confirm_request(winner, repeat));
    if (b.outcome == TrialOutcome::ok && b.busbw.size() == a.busbw.size())
      b_runs.push_back(b.busbw);
    else if (b.outcome != TrialOutcome::ok)
      winner_failed = true;
    for (std::size_t i = 0; i < arms.size() && !winner_failed; ++i) {
      if (arm_failed[i]) continue;
      const TrialMeasurement c = run_trial(confirm_request(arms[i], repeat));
      if (c.outcome == TrialOutcome::ok && c.busbw.size() == a.busbw.size())
        arm_runs[i].push_back(c.busbw);
      else
        arm_failed[i] = true;  // the list is what lets the rest run
    }
  }
  const std::vector<bool> on_grid = from_grid(points.sizes, requested, grid);
  const auto grid_only = [&](const std::vector<double>& curve) {
    std::vector<double> out;
    for (std::size_t i = 0; i < curve.size() && i < on_grid.size(); ++i)
      if (on_grid[i]) out.push_back(curve[i]);
    return out;
  };
  TrialMeasurement every_point = points;  // the grid's and those between
  every_point.busbw = mean_curve(a_runs);
  points = without_points(every_point);
  for (std::size_t i = 0; i < every_point.sizes.size() && i < on_grid.size(); ++i)
    if (on_grid[i]) copy_point(every_point, i, points);
  result_.ops = point_ops(points);
  result_.sizes = points.sizes;
  points.busbw = result_.baseline_busbw = grid_only(every_point.busbw);
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
  std::string lists_verdict;
  // The curve of `env` as measured in these rounds, every point: the winner's, an arm's or the
  // defaults'.
  const auto every_curve_of = [&](const Env& env) -> std::optional<std::vector<double>> {
    if (env == winner) return mean_curve(b_runs);
    if (env.empty()) return every_point.busbw;
    for (std::size_t i = 0; i < arms.size(); ++i)
      if (arms[i] == env && !arm_failed[i] && arm_runs[i].size() == a_runs.size())
        return mean_curve(arm_runs[i]);
    return std::nullopt;
  };
  // ... and at the grid's points, which the score and the lists are judged on.
  const CurveOf curve_of = [&](const Env& env) -> std::optional<std::vector<double>> {
    const auto curve = every_curve_of(env);
    return curve ? std::optional(grid_only(*curve)) : std::nullopt;
  };
  const std::vector<double> winner_curve = *curve_of(winner);
  const Env shipped =
      without_lists_that_give_nothing(winner, winner_curve, points, curve_of, lists_verdict);
  const std::vector<double> tuned = *curve_of(shipped);
  const Score s = score_against(points, tuned);
  // A setting ships only where no size between the grid's loses beyond the noise either, measured
  // or by the fitted costs (fitted_loss.h): a knob whose effect depends on size can win at every
  // grid point and lose at a job's 3 MiB.
  const double allowed = std::max(options_.tolerance, result_.noise);
  const auto between = shipped.empty() ? std::nullopt : worst_between(every_point, *every_curve_of(shipped), on_grid);
  const bool loses_between = between && between->loss.ratio < 1 - allowed;
  const std::string summary = "A/B " + std::to_string(a_runs.size()) + (a_runs.size() == 1 ? " round: " : " rounds: ") +
                              describe_env(shipped) +
                              " " + signed_percent(s.value - 1) + " (worst size " +
                              signed_percent(s.worst_ratio - 1) + ", noise " + percent(result_.noise) +
                              ")" + lists_verdict;
  if (loses_between) {
    const FittedLoss& l = between->loss;
    result_.confirmation = summary + ": not confirmed, " + describe_op(between->op) + " runs " +
                           signed_percent(l.ratio - 1) + " at " + format_byte_size(l.bytes) +
                           (between->measured ? " (measured, between " : " (by the fitted costs, between the measured ") +
                           format_byte_size(l.lo) + " and " + format_byte_size(l.hi) + "); keeping the defaults";
  } else if (!shipped.empty() && s.acceptable && s.value > 1 + result_.noise) {
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
