// The strategy's cross of the knobs that beat the noise, and the successive halving of the
// candidates on the final grid (strategy_search.h).
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

bool Search::adds_nothing(const Candidate& c) const {
  const std::optional<std::string> knob = screened_knob(c.env);
  if (!knob || c.env.size() != 2) return false;
  const Env alone{{*knob, c.env.at(*knob)}};
  const auto base = std::find_if(screened_.begin(), screened_.end(), [&](const Candidate& s) { return s.env == alone; });
  return base != screened_.end() && c.score.value <= base->score.value * (1 + result_.noise);
}

TrialMeasurement Search::halving_trial(const Env& env, int iterations, int round) {
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

HelpfulValues Search::helpful_values() const {
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

bool Search::cross(const Env& env) {
  const TrialMeasurement m = run_trial(screen_request(env, TrialPhase::cross));
  note(env, m);
  return m.outcome == TrialOutcome::ok;
}

void Search::cross_knobs_that_matter() {
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

bool Search::cross_next_values(Env env, const std::string& name, const HelpfulValues& helpful) {
  for (auto next = next_helpful_value(helpful, name, env.at(name)); next;
       next = next_helpful_value(helpful, name, *next)) {
    if (!budget_left()) return false;
    env[name] = *next;
    ++planned_;
    if (cross(env)) break;
  }
  return true;
}

std::vector<Candidate> Search::shippable(const std::vector<Candidate>& finalists) {
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

std::vector<Candidate> Search::halve() {
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

void Search::prefer_fewer_settings(std::vector<Candidate>& ranked) const {
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

}  // namespace nccltune::strategy_search
