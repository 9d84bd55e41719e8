// The strategy's NCCL_ALGO x NCCL_PROTO pairs: the cross with nothing else set, the pairs again
// under a finalist's settings, and the per-size choices (strategy_search.h).
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
#include "search/crossover_refinement.h"
#include "search/shippable_env.h"

namespace nccltune::strategy_search {

namespace {

// `pair`'s finite times of `op`, by size (an env trial's curve holds only the collectives NCCL
// runs the pair for; pair mode's holds +inf where NCCL did not offer it).
std::map<std::uint64_t, double> finite_times_of(const std::vector<PairCurve>& curves, const AlgoProto& pair,
                                                const ShapedOp& op) {
  std::map<std::uint64_t, double> out;
  for (const PairCurve& c : curves) {
    if (c.pair != pair) continue;
    for (std::size_t i = 0; i < c.sizes.size() && i < c.ops.size() && i < c.time_us.size(); ++i)
      if (c.ops[i] == op && std::isfinite(c.time_us[i]) && c.time_us[i] > 0)
        out.emplace(c.sizes[i], c.time_us[i]);
  }
  return out;
}

// Each two adjacent sizes of `per_size` whose winners differ, with both winners' times wherever
// both have one.
std::vector<CrossoverGap> crossover_gaps(const std::vector<PairCurve>& curves,
                                         const std::map<ShapedOp, std::vector<SizeChoice>>& per_size) {
  std::vector<CrossoverGap> gaps;
  for (const auto& [op, choices] : per_size)
    for (std::size_t i = 1; i < choices.size(); ++i) {
      const SizeChoice& lo = choices[i - 1];
      const SizeChoice& hi = choices[i];
      if (lo.algo == hi.algo && lo.proto == hi.proto) continue;
      CrossoverGap gap;
      gap.op = op;
      gap.below = {lo.algo, lo.proto};
      gap.above = {hi.algo, hi.proto};
      gap.lo = lo.min_bytes;
      gap.hi = hi.min_bytes;
      const auto below = finite_times_of(curves, {lo.algo, lo.proto}, op);
      const auto above = finite_times_of(curves, {hi.algo, hi.proto}, op);
      for (const auto& [bytes, t] : below)
        if (const auto other = above.find(bytes); other != above.end()) {
          gap.below_times.sizes.push_back(bytes);
          gap.below_times.time_us.push_back(t);
          gap.above_times.sizes.push_back(bytes);
          gap.above_times.time_us.push_back(other->second);
        }
      gaps.push_back(std::move(gap));
    }
  return gaps;
}

}  // namespace

bool Search::runs_for_some_collective(const std::string& algo, const std::string& proto) const {
  return std::any_of(options_.collectives.begin(), options_.collectives.end(), [&](const std::string& op) {
    return nccl_runs_pair_for(op, algo, proto);
  });
}

bool Search::leaves_every_collective_an_algorithm(const std::string& value) const {
  if (!nccl_algorithm_index(value)) return true;
  return std::all_of(options_.collectives.begin(), options_.collectives.end(), [&](const std::string& op) {
    return std::any_of(kNcclProtocols.begin(), kNcclProtocols.end(),
                       [&](std::string_view proto) { return nccl_runs_pair_for(op, value, proto); });
  });
}

std::optional<std::vector<PairCurve>> Search::cross_pairs(const Env& base, const std::vector<AlgoProto>& pairs,
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

int Search::pair_runs_needed(const Env& base, const std::vector<AlgoProto>& pairs, TrialPhase phase) const {
  const auto samples = final_samples_.find(base);
  if (phase != TrialPhase::per_size || samples == final_samples_.end() || !samples->second.covers(pairs))
    return pair_rounds();
  return std::max(0, pair_rounds() - samples->second.count);
}

std::optional<std::vector<PairCurve>> Search::cross_pairs_in_process(const Env& base,
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

std::vector<AlgoProto> Search::pairs_riding_along(const Env& env) const {
  const auto cross = pair_curves_.find(options_.carried);
  if (!options_.pair_mode || sets_algo_or_proto(env) || cross == pair_curves_.end()) return {};
  std::vector<AlgoProto> pairs;
  for (const PairCurve& c : cross->second) pairs.push_back(c.pair);
  return pairs;
}

void Search::cross_algo_proto() {
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

bool Search::pairs_hold_under(const Env& finalist) {
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

void Search::choose_per_size() {
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
  const auto curves = pair_curves_.find(base);
  result_.per_size.clear();
  result_.switches.clear();
  if (curves == pair_curves_.end()) return;
  result_.per_size = fastest_pair_per_size(curves->second, result_.env);
  locate_switches(base, curves->second);
}

void Search::locate_switches(const Env& base, const std::vector<PairCurve>& curves) {
  std::vector<CrossoverGap> gaps = crossover_gaps(curves, result_.per_size);
  if (gaps.empty()) return;
  // Refinement runs in pair mode only, and only when these curves are pair mode's (not the env
  // trials a crashed pair-mode run fell back to): without it each pair costs a communicator, and
  // the switches are the final grid's fits alone.
  const auto samples = final_samples_.find(base);
  const bool from_pair_mode =
      options_.pair_mode && samples != final_samples_.end() && samples->second.count >= pair_rounds();
  ProbeRunner run;
  // One run per iteration, not pair_rounds() medians: a probe only has to order two pairs near
  // their crossing, where they differ by little, so an order one run's noise flips is one where
  // they are within about that noise of each other, and the switch it misplaces costs a job about
  // that much; the fits pool the probes with their neighbours, which averages the noise. Three
  // runs a probe would triple the cost against the 15% cap on added pairs (README, "Every size a
  // job asks for").
  if (from_pair_mode)
    run = [this](const TrialRequest& r) -> std::optional<TrialMeasurement> {
      const int cost = trial_count(r);
      if (!budget_left(cost)) return std::nullopt;
      planned_ += cost;
      return run_trial(r);
    };
  const TrialRequest probes =
      request(base, TrialPhase::per_size, options_.final_grid, options_.final_iterations, 0);
  result_.switches = refine_crossovers(std::move(gaps), probes, std::max(result_.noise, kMinNoise), run);
}

}  // namespace nccltune::strategy_search
