#include "tune_profile/plugin_confirmation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "base/byte_size.h"
#include "profile/size_ranges.h"
#include "tune_profile/collectives_by_op.h"

namespace nccltune {

namespace {

// The points of `op` in the rounds: their sizes, the defaults' and env + plugin's busbw, and
// whether the plugin served them.
struct OpPoints {
  std::vector<std::size_t> sizes;
  std::vector<double> defaults, with_plugin;
  std::vector<int> served;
};

OpPoints points_of(const PluginRounds& rounds, const ShapedOp& op) {
  OpPoints points;
  for (std::size_t i = 0; i < rounds.ops.size(); ++i) {
    if (rounds.ops[i] != op || i >= rounds.sizes.size() || i >= rounds.defaults.size() ||
        i >= rounds.with_plugin.size())
      continue;
    points.sizes.push_back(rounds.sizes[i]);
    points.defaults.push_back(rounds.defaults[i]);
    points.with_plugin.push_back(rounds.with_plugin[i]);
    points.served.push_back(i < rounds.served.size() ? rounds.served[i] : 0);
  }
  return points;
}

// Those of `points` at one of `sizes`.
OpPoints at_sizes(const OpPoints& points, const std::vector<std::uint64_t>& sizes) {
  const std::set<std::uint64_t> wanted(sizes.begin(), sizes.end());
  OpPoints at;
  for (std::size_t i = 0; i < points.sizes.size(); ++i) {
    if (wanted.count(points.sizes[i]) == 0) continue;
    at.sizes.push_back(points.sizes[i]);
    at.defaults.push_back(points.defaults[i]);
    at.with_plugin.push_back(points.with_plugin[i]);
    at.served.push_back(points.served[i]);
  }
  return at;
}

// One measured size inside a range: env + plugin's busbw over the defaults' there (1 where the
// plugin did not serve), and whether the range's choice held there: served, and not slower than
// the defaults beyond the tolerance.
struct RangePoint {
  std::uint64_t bytes = 0;
  double ratio = 1;
  bool served = true;
  bool held = true;
};

// Which of two losing sizes says more: one not served (then the first), else the slower.
bool worse(const RangePoint& a, const RangePoint& b) {
  return a.served ? b.served && a.ratio < b.ratio : b.served;
}

// Whether `bytes` is nearer `range`'s lower edge than its upper one, by ratio (sizes are spaced
// by ratio: the grid, the confirmation's half-octave steps); a range from 0 is taken from 1.
bool nearer_lower_edge(std::uint64_t bytes, const SizeChoice& range) {
  const double x = static_cast<double>(bytes);
  const double low = static_cast<double>(std::max<std::uint64_t>(1, range.min_bytes));
  return std::log(x / low) < std::log(static_cast<double>(range.max_bytes) / x);
}

// Where a cut range meets NCCL's own choice, between two adjacent measured sizes of it, `lower`
// and `upper`, where its choice held at one and lost at the other: the first size of the upper
// side, their geometric midpoint, in (lower, upper]. Not the losing size itself: it lost there
// beyond the noise, and between two choices NCCL's cost model (time = latency + bytes / bandwidth
// per algorithm and protocol) moves the ratio steadily with size, so the sizes just short of it
// lose nearly as much, while those near the size that held are close to even. The true switch is
// somewhere between the two; the midpoint splits the unmeasured stretch between the choice and
// NCCL's own (by ratio, as the sizes are spaced), and the next rounds measure the new edge.
// The off-grid crossover model's Tree/LL128 held at 1M and lost 0.84x at 1.5M: it ships to 1.22M - 1.
std::uint64_t switch_between(std::uint64_t lower, std::uint64_t upper) {
  const double middle =
      std::ceil(std::sqrt(static_cast<double>(lower)) * std::sqrt(static_cast<double>(upper)));
  const auto bytes = middle >= static_cast<double>(upper) ? upper : static_cast<std::uint64_t>(middle);
  return std::max(lower + 1, bytes);
}

// What the rounds make of `range` from its measured sizes (ascending): nullopt when it held at
// every one. Else every size from a losing one to the nearer edge goes to NCCL's own choice, and
// the range keeps the rest if one of its sizes held there.
std::optional<WithheldRange> cut_back(const ShapedOp& op, const SizeChoice& range,
                                      const std::vector<RangePoint>& points, const std::string& not_served) {
  const RangePoint* worst = nullptr;
  const RangePoint* below = nullptr;  // the largest losing size nearer the lower edge
  const RangePoint* above = nullptr;  // the smallest nearer the upper edge
  for (const RangePoint& p : points) {
    if (p.held) continue;
    if (worst == nullptr || worse(p, *worst)) worst = &p;
    if (nearer_lower_edge(p.bytes, range))
      below = &p;
    else if (above == nullptr)
      above = &p;
  }
  if (worst == nullptr) return std::nullopt;
  const RangePoint* first_held = nullptr;  // what held between them
  const RangePoint* last_held = nullptr;
  for (const RangePoint& p : points)
    if (p.held && (below == nullptr || p.bytes > below->bytes) && (above == nullptr || p.bytes < above->bytes)) {
      if (first_held == nullptr) first_held = &p;
      last_held = &p;
    }
  const RangePoint* says = worst;
  std::optional<SizeChoice> kept;
  if (first_held != nullptr) {
    kept = range;
    if (below != nullptr) kept->min_bytes = switch_between(below->bytes, first_held->bytes);
    if (above != nullptr) kept->max_bytes = switch_between(last_held->bytes, above->bytes) - 1;
    says = below == nullptr ? above : (above == nullptr || worse(*below, *above)) ? below : above;
  }
  return WithheldRange{op, range, says->bytes, says->ratio, says->served, says->served ? "" : not_served, kept};
}

std::string not_served_why(const PluginRounds& rounds) {
  return rounds.declined_why.empty() ? "NCCL did not ask the tuner plugin" : rounds.declined_why;
}

// ", 2.15x at 512K (best size)": env + plugin against the defaults where it gains most; "" when
// it gains nowhere.
std::string best_size_text(const ProfileResults& results) {
  double best = 1;
  std::size_t at = 0;
  for (std::size_t i = 0; i < results.with_plugin.size() && i < results.baseline.size(); ++i)
    if (results.baseline[i] > 0 && results.with_plugin[i] / results.baseline[i] > best) {
      best = results.with_plugin[i] / results.baseline[i];
      at = i;
    }
  if (best <= 1) return "";
  return fmt::format(", {:.2f}x at {} (best size)", best, format_byte_size(results.sizes[at]));
}

// One collective's verdict from the ranges it kept and those withheld.
PluginVerdict verdict_of(const ShapedOp& op, const CollectiveProfile& collective,
                         const std::vector<WithheldRange>& withheld) {
  std::vector<const WithheldRange*> own;
  for (const WithheldRange& range : withheld)
    if (range.op == op) own.push_back(&range);
  PluginVerdict verdict;
  if (collective.per_size.empty() && own.empty()) return verdict;
  const auto unserved =
      std::find_if(own.begin(), own.end(), [](const WithheldRange* r) { return !r->served; });
  if (!collective.per_size.empty() && !collective.results.with_plugin.empty()) {
    verdict.status = PluginStatus::confirmed;
    verdict.why =
        fmt::format("{} range(s) served at every measured size, {:+.1f}% with the plugin (geomean){}",
                    collective.per_size.size(), 100 * (collective.results.with_plugin_speedup_geomean - 1),
                    best_size_text(collective.results));
  } else if (unserved != own.end()) {
    verdict.status = PluginStatus::not_served;
    verdict.why = (*unserved)->why;
  } else if (!own.empty()) {
    verdict.status = PluginStatus::slower;
    verdict.why = "slower than the defaults under the plugin";
  } else {
    return verdict;  // ranges no measured size falls in: nothing to say
  }
  for (std::size_t i = 0; i < own.size(); ++i) verdict.why += (i ? ", " : "; withheld: ") + describe(*own[i]);
  return verdict;
}

}  // namespace

std::vector<WithheldRange> withheld_ranges(const Profile& profile, const PluginRounds& rounds,
                                           double tolerance) {
  std::vector<WithheldRange> withheld;
  for (const auto& [op, entry] : collectives_by_op(profile)) {
    const CollectiveProfile& collective = *entry;
    if (collective.guard || collective.per_size.empty()) continue;
    const OpPoints points = points_of(rounds, op);
    std::map<std::size_t, std::vector<RangePoint>> by_range;  // by index into per_size, ascending
    for (std::size_t i = 0; i < points.sizes.size(); ++i) {
      // An empty collective (all_gather of 8 bytes on 4 ranks moves 0 per rank) is no call NCCL
      // makes: nothing to serve, nothing to measure.
      const SizeChoice* range =
          points.sizes[i] > 0 ? choice_for_size(collective.per_size, points.sizes[i]) : nullptr;
      if (range == nullptr) continue;
      const bool served = points.served[i] != 0;
      if (served && !(points.defaults[i] > 0)) continue;  // no measurement to compare with
      const double ratio = served ? points.with_plugin[i] / points.defaults[i] : 1;
      by_range[static_cast<std::size_t>(range - collective.per_size.data())].push_back(
          {points.sizes[i], ratio, served, served && ratio >= 1 - tolerance});
    }
    for (const auto& [index, judged] : by_range) {
      std::optional<WithheldRange> range =
          cut_back(op, collective.per_size[index], judged, not_served_why(rounds));
      if (range) withheld.push_back(std::move(*range));
    }
  }
  return withheld;
}

void drop_ranges(Profile& profile, const std::vector<WithheldRange>& withheld) {
  const std::map<ShapedOp, CollectiveProfile*> collectives = collectives_by_op(profile);
  for (const WithheldRange& range : withheld) {
    const auto collective = collectives.find(range.op);
    if (collective == collectives.end()) continue;
    std::vector<SizeChoice>& ranges = collective->second->per_size;
    ranges.erase(std::remove(ranges.begin(), ranges.end(), range.range), ranges.end());
  }
}

void cut_ranges(Profile& profile, const std::vector<WithheldRange>& withheld) {
  const std::map<ShapedOp, CollectiveProfile*> collectives = collectives_by_op(profile);
  for (const WithheldRange& range : withheld) {
    const auto collective = collectives.find(range.op);
    if (collective == collectives.end()) continue;
    std::vector<SizeChoice>& ranges = collective->second->per_size;
    const auto at = std::find(ranges.begin(), ranges.end(), range.range);
    if (at == ranges.end()) continue;
    if (range.kept)
      *at = *range.kept;  // inside the range it replaces: per_size stays ascending and disjoint
    else
      ranges.erase(at);
  }
}

void record_with_plugin(Profile& profile, const PluginRounds& rounds, Objective objective, double tolerance,
                        const std::vector<WithheldRange>& withheld) {
  double worst_speedup = 0;
  bool first = true;
  for (const auto& [op, entry] : collectives_by_op(profile)) {
    CollectiveProfile& collective = *entry;
    ProfileResults& results = collective.results;
    results.with_plugin.clear();
    results.with_plugin_speedup_geomean = 1;
    const OpPoints all = points_of(rounds, op);
    // The curve is the grid's, size by size beside results.sizes; the sizes off the grid only
    // decided what was withheld.
    const OpPoints points = at_sizes(all, results.sizes);
    // Only a collective whose ranges the plugin served (anywhere it measured) has a with-plugin
    // curve: anything else would be the env's own numbers under another name.
    const bool served = !collective.guard && !collective.per_size.empty() && !points.sizes.empty() &&
                        points.sizes.size() == results.sizes.size() &&
                        std::any_of(all.served.begin(), all.served.end(), [](int s) { return s != 0; });
    if (served) {
      results.with_plugin = points.with_plugin;
      results.with_plugin_speedup_geomean =
          score(objective, points.sizes, points.defaults, points.with_plugin, tolerance).value;
      worst_speedup = first ? results.with_plugin_speedup_geomean
                            : std::min(worst_speedup, results.with_plugin_speedup_geomean);
      first = false;
    }
    collective.plugin = verdict_of(op, collective, withheld);
  }
  std::string text;
  if (!first) {
    text = fmt::format(
        "A/B {} round{} in fresh workers: defaults against env + tuner plugin with this profile: "
        "{:+.1f}% (the served collective that gains least)",
        rounds.rounds, rounds.rounds == 1 ? "" : "s", 100 * (worst_speedup - 1));
  } else {
    const auto unserved =
        std::find_if(withheld.begin(), withheld.end(), [](const WithheldRange& r) { return !r.served; });
    text = unserved != withheld.end() ? "not served: " + unserved->why
                                      : "no per-size choice held against the defaults under the plugin";
  }
  for (std::size_t i = 0; i < withheld.size(); ++i)
    text += (i ? ", " : "; withheld: ") + describe(withheld[i]);
  profile.provenance.plugin_confirmation = text;
}

std::string describe(const WithheldRange& range) {
  // "rail: all_reduce 0..1048576 Ring/LL128": the shape as a section names it.
  const CommRole role = range.op.role;
  const std::string comm = role == CommRole::world ? "" : std::string(to_string(role)) + ": ";
  const std::string head = fmt::format("{}{} {}..{} {}/{}", comm, range.op.collective, range.range.min_bytes,
                                       range.range.max_bytes, range.range.algo, range.range.proto);
  const std::string cut =
      range.kept ? fmt::format(" cut back to {}..{}", range.kept->min_bytes, range.kept->max_bytes) : "";
  if (!range.served) return fmt::format("{}{} (not served at {})", head, cut, range.bytes);
  return fmt::format("{}{} ({:.2f}x at {})", head, cut, range.ratio, range.bytes);
}

}  // namespace nccltune
