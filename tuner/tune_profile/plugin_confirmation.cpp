#include "tune_profile/plugin_confirmation.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

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
    std::map<std::size_t, WithheldRange> by_range;  // by index into per_size
    for (std::size_t i = 0; i < points.sizes.size(); ++i) {
      // An empty collective (all_gather of 8 bytes on 4 ranks moves 0 per rank) is no call NCCL
      // makes: nothing to serve, nothing to measure.
      const SizeChoice* range =
          points.sizes[i] > 0 ? choice_for_size(collective.per_size, points.sizes[i]) : nullptr;
      if (range == nullptr) continue;
      const auto index = static_cast<std::size_t>(range - collective.per_size.data());
      const auto seen = by_range.find(index);
      if (seen != by_range.end() && !seen->second.served) continue;  // the first unserved size says it
      if (!points.served[i]) {
        by_range[index] = WithheldRange{op, *range, points.sizes[i], 1, false, not_served_why(rounds)};
        continue;
      }
      if (!(points.defaults[i] > 0)) continue;
      const double ratio = points.with_plugin[i] / points.defaults[i];
      if (ratio >= 1 - tolerance) continue;
      if (seen == by_range.end() || ratio < seen->second.ratio)
        by_range[index] = WithheldRange{op, *range, points.sizes[i], ratio, true, {}};
    }
    for (const auto& [index, range] : by_range) withheld.push_back(range);
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

void record_with_plugin(Profile& profile, const PluginRounds& rounds, Objective objective, double tolerance,
                        const std::vector<WithheldRange>& withheld) {
  double worst_speedup = 0;
  bool first = true;
  for (const auto& [op, entry] : collectives_by_op(profile)) {
    CollectiveProfile& collective = *entry;
    ProfileResults& results = collective.results;
    results.with_plugin.clear();
    results.with_plugin_speedup_geomean = 1;
    const OpPoints points = points_of(rounds, op);
    // Only a collective whose ranges the plugin served has a with-plugin curve: anything else
    // would be the env's own numbers under another name.
    const bool served = !collective.guard && !collective.per_size.empty() && !points.sizes.empty() &&
                        points.sizes.size() == results.sizes.size() &&
                        std::any_of(points.served.begin(), points.served.end(), [](int s) { return s != 0; });
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
        "A/B {} rounds in fresh workers: defaults against env + tuner plugin with this profile: "
        "{:+.1f}% (the served collective that gains least)",
        rounds.rounds, 100 * (worst_speedup - 1));
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
  if (!range.served) return fmt::format("{} (not served at {})", head, range.bytes);
  return fmt::format("{} ({:.2f}x at {})", head, range.ratio, range.bytes);
}

}  // namespace nccltune
