#include "search/crossover_refinement.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <utility>

namespace nccltune {

namespace {

std::size_t index_of(const MeasuredTimes& times, std::uint64_t bytes) {
  return static_cast<std::size_t>(std::lower_bound(times.sizes.begin(), times.sizes.end(), bytes) -
                                  times.sizes.begin());
}

MeasuredTimes times_between(const MeasuredTimes& times, std::size_t first, std::size_t last) {
  MeasuredTimes out;
  for (std::size_t i = first; i <= last; ++i) {
    out.sizes.push_back(times.sizes[i]);
    out.time_us.push_back(times.time_us[i]);
  }
  return out;
}

// Adds a point at a size `times` does not have yet; false when it has it (a size the run rounded
// onto one already measured adds nothing).
bool add_point(MeasuredTimes& times, std::uint64_t bytes, double time_us) {
  const std::size_t at = index_of(times, bytes);
  if (at < times.sizes.size() && times.sizes[at] == bytes) return false;
  times.sizes.insert(times.sizes.begin() + static_cast<std::ptrdiff_t>(at), bytes);
  times.time_us.insert(times.time_us.begin() + static_cast<std::ptrdiff_t>(at), time_us);
  return true;
}

std::string pair_name(const NcclChoice& pair) {
  return pair.algo + "/" + pair.proto;
}

// One gap as the refinement goes: its times with the probes merged, its bracket, and whether it
// still takes probes.
struct GapState {
  CrossoverGap gap;
  std::optional<Crossover> at;
  bool open = true;
};

// `pair`'s times of `op` in a pair-mode run, by size: the points it ran (NCCL offered it there)
// strictly inside (lo, hi). Empty when it failed its own data check.
std::map<std::uint64_t, double> probe_times(const TrialMeasurement& m, const std::vector<NcclChoice>& pairs,
                                            const NcclChoice& pair, const ShapedOp& op, std::uint64_t lo,
                                            std::uint64_t hi) {
  std::map<std::uint64_t, double> out;
  const auto at = std::find(pairs.begin(), pairs.end(), pair);
  if (at == pairs.end()) return out;
  const TrialMeasurement points =
      pair_points(m, pairs.size(), static_cast<std::size_t>(std::distance(pairs.begin(), at)));
  if (points.outcome != TrialOutcome::ok) return out;
  for (std::size_t i = 0; i < points.sizes.size() && i < points.time_us.size(); ++i) {
    const bool offered = i >= points.unavailable.size() || points.unavailable[i] == 0;
    const double t = points.time_us[i];
    if (offered && std::isfinite(t) && t > 0 && point_op(points, i) == op && points.sizes[i] > lo &&
        points.sizes[i] < hi)
      out.emplace(points.sizes[i], t);
  }
  return out;
}

// The request of one iteration: `base` narrowed to what the open gaps need.
TrialRequest probe_request(const TrialRequest& base, const std::vector<GapState>& gaps, int iteration) {
  TrialRequest r = base;
  r.repeat = iteration;
  r.pairs.clear();
  r.sizes.clear();
  std::set<std::string> collectives, comms;
  std::set<std::uint64_t> sizes;
  for (const GapState& g : gaps) {
    if (!g.open) continue;
    collectives.insert(g.gap.op.collective);
    comms.insert(std::string(to_string(g.gap.op.role)));
    for (const NcclChoice& pair : {g.gap.below, g.gap.above})
      if (std::find(r.pairs.begin(), r.pairs.end(), pair) == r.pairs.end()) r.pairs.push_back(pair);
    for (const std::uint64_t bytes : probe_sizes(*g.at)) sizes.insert(bytes);
  }
  // The worker always creates the world, splits only the communicators named and sweeps only
  // those (collectives/worker.cpp), so a request of the rails alone is valid.
  std::erase_if(r.collectives, [&](const std::string& op) { return !collectives.count(op); });
  std::erase_if(r.comms, [&](const std::string& comm) { return !comms.count(comm); });
  r.sizes.assign(sizes.begin(), sizes.end());
  return r;
}

// Merges a run's points into an open gap and locates its bracket again; closes it when the run
// added nothing to it or its bracket can no longer be told.
void merge_probes(GapState& g, const TrialMeasurement& m, const std::vector<NcclChoice>& pairs) {
  const auto below = probe_times(m, pairs, g.gap.below, g.gap.op, g.gap.lo, g.gap.hi);
  const auto above = probe_times(m, pairs, g.gap.above, g.gap.op, g.gap.lo, g.gap.hi);
  bool added = false;
  for (const auto& [bytes, t] : below) {
    const auto other = above.find(bytes);
    if (other == above.end()) continue;
    if (add_point(g.gap.below_times, bytes, t)) {
      add_point(g.gap.above_times, bytes, other->second);  // both hold the same sizes
      added = true;
    }
  }
  std::optional<Crossover> again =
      added ? crossover_in_gap(g.gap.below_times, g.gap.above_times, g.gap.lo, g.gap.hi) : std::nullopt;
  if (again) {
    g.at = std::move(again);
  } else {
    g.open = false;  // the last bracket stands
  }
}

}  // namespace

std::optional<Crossover> crossover_in_gap(const MeasuredTimes& below, const MeasuredTimes& above,
                                          std::uint64_t lo, std::uint64_t hi) {
  const auto found = locate_crossovers(below, above);
  if (!found.ok()) return std::nullopt;
  std::vector<Crossover> inside;
  for (const Crossover& c : *found)
    if (c.lo >= lo && c.hi <= hi) inside.push_back(c);
  // `below` wins at the first bracket's start and `above` at the last one's end.
  if (inside.empty() || inside.front().below != 0 || inside.back().below != 0) return std::nullopt;
  if (inside.size() == 1) return inside.front();
  // Several changes: one bracket over them all, fitted on its points and one neighbour each side,
  // as locate_crossovers fits one.
  Crossover c = inside.front();
  c.hi = inside.back().hi;
  const std::size_t first = index_of(below, c.lo);
  const std::size_t last = index_of(below, c.hi);
  const std::size_t from = first >= kCrossoverFitNeighbours ? first - kCrossoverFitNeighbours : 0;
  const std::size_t to = std::min(below.sizes.size() - 1, last + kCrossoverFitNeighbours);
  c.first = *fit_cost(times_between(below, from, to));  // valid: locate_crossovers checked them
  c.second = *fit_cost(times_between(above, from, to));
  const FittedSwitch at = fitted_switch(c.first, c.second, c.lo, c.hi);
  c.bytes = at.bytes;
  c.fit = at.fit;
  return c;
}

std::vector<std::uint64_t> probe_sizes(const Crossover& c) {
  const double lo = static_cast<double>(c.lo), hi = static_cast<double>(c.hi);
  std::vector<double> wanted;
  if (c.fitted()) {
    const double x = static_cast<double>(c.bytes);
    wanted = {x / kProbeSpread, x * kProbeSpread};
  } else {
    wanted = {std::sqrt(lo * hi)};
  }
  std::vector<std::uint64_t> sizes;
  for (const double w : wanted) {
    const auto bytes = static_cast<std::uint64_t>(std::llround(w));
    if (bytes > c.lo && bytes < c.hi && (sizes.empty() || sizes.back() < bytes)) sizes.push_back(bytes);
  }
  return sizes;
}

bool bracket_settled(const Crossover& c, const MeasuredTimes& below, const MeasuredTimes& above,
                     double noise) {
  if (static_cast<double>(c.hi) <= kSettledRatio * static_cast<double>(c.lo)) return true;
  for (std::size_t i = index_of(below, c.lo); i < below.sizes.size() && below.sizes[i] <= c.hi; ++i)
    if (std::abs(below.time_us[i] / above.time_us[i] - 1) > noise) return false;
  return true;
}

SizeSwitch size_switch(const CrossoverGap& gap, const Crossover& c) {
  const CostFit& below = c.below == 0 ? c.first : c.second;
  const CostFit& above = c.below == 0 ? c.second : c.first;
  SizeSwitch s;
  s.lo = c.lo;
  s.hi = c.hi;
  s.bytes = c.fitted() ? c.bytes : c.hi;
  s.fit = std::string(to_string(c.fit));
  s.below = pair_name(gap.below);
  s.above = pair_name(gap.above);
  s.below_latency_us = below.latency_us;
  s.below_gbps = below.gbps();
  s.above_latency_us = above.latency_us;
  s.above_gbps = above.gbps();
  return s;
}

std::map<ShapedOp, std::vector<SizeSwitch>> refine_crossovers(std::vector<CrossoverGap> gaps,
                                                              const TrialRequest& base, double noise,
                                                              const ProbeRunner& run) {
  std::vector<GapState> states;
  for (CrossoverGap& gap : gaps) {
    GapState g{std::move(gap), std::nullopt, true};
    g.at = crossover_in_gap(g.gap.below_times, g.gap.above_times, g.gap.lo, g.gap.hi);
    states.push_back(std::move(g));
  }
  for (int iteration = 0; run && iteration < kRefinementIterations; ++iteration) {
    bool any = false;
    for (GapState& g : states) {
      g.open = g.open && g.at && !bracket_settled(*g.at, g.gap.below_times, g.gap.above_times, noise) &&
               !probe_sizes(*g.at).empty();
      any = any || g.open;
    }
    if (!any) break;
    const TrialRequest request = probe_request(base, states, iteration);
    const std::optional<TrialMeasurement> m = run(request);
    if (!m || m->outcome != TrialOutcome::ok) break;  // the budget, or a run that failed as a whole
    for (GapState& g : states)
      if (g.open) merge_probes(g, *m, request.pairs);
  }
  std::map<ShapedOp, std::vector<SizeSwitch>> switches;
  for (const GapState& g : states)
    if (g.at) switches[g.gap.op].push_back(size_switch(g.gap, *g.at));
  for (auto& [op, list] : switches)
    std::sort(list.begin(), list.end(), [](const SizeSwitch& a, const SizeSwitch& b) { return a.lo < b.lo; });
  return switches;
}

}  // namespace nccltune
