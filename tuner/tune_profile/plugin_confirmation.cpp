#include "tune_profile/plugin_confirmation.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "profile/size_ranges.h"

namespace nccltune {

namespace {

// The points of `op` in the rounds: their sizes, the defaults' and env + plugin's busbw.
struct OpPoints {
  std::vector<std::size_t> sizes;
  std::vector<double> defaults, with_plugin;
};

OpPoints points_of(const PluginRounds& rounds, const std::string& op) {
  OpPoints points;
  for (std::size_t i = 0; i < rounds.ops.size(); ++i) {
    if (rounds.ops[i] != op || i >= rounds.sizes.size() || i >= rounds.defaults.size() ||
        i >= rounds.with_plugin.size())
      continue;
    points.sizes.push_back(rounds.sizes[i]);
    points.defaults.push_back(rounds.defaults[i]);
    points.with_plugin.push_back(rounds.with_plugin[i]);
  }
  return points;
}

}  // namespace

std::vector<LosingRange> losing_ranges(const Profile& profile, const PluginRounds& rounds, double tolerance) {
  std::vector<LosingRange> losing;
  for (const auto& [op, collective] : profile.collectives) {
    if (collective.guard || collective.per_size.empty()) continue;
    const OpPoints points = points_of(rounds, op);
    std::map<std::size_t, LosingRange> by_range;  // by index into per_size: the slowest size
    for (std::size_t i = 0; i < points.sizes.size(); ++i) {
      if (!(points.defaults[i] > 0)) continue;
      const double ratio = points.with_plugin[i] / points.defaults[i];
      if (ratio >= 1 - tolerance) continue;
      const SizeChoice* range = choice_for_size(collective.per_size, points.sizes[i]);
      if (range == nullptr) continue;
      const auto index = static_cast<std::size_t>(range - collective.per_size.data());
      const auto seen = by_range.find(index);
      if (seen == by_range.end() || ratio < seen->second.ratio)
        by_range[index] = LosingRange{op, *range, points.sizes[i], ratio};
    }
    for (const auto& [index, range] : by_range) losing.push_back(range);
  }
  return losing;
}

void drop_ranges(Profile& profile, const std::vector<LosingRange>& losing) {
  for (const LosingRange& lost : losing) {
    const auto collective = profile.collectives.find(lost.op);
    if (collective == profile.collectives.end()) continue;
    std::vector<SizeChoice>& ranges = collective->second.per_size;
    ranges.erase(std::remove(ranges.begin(), ranges.end(), lost.range), ranges.end());
  }
}

void record_with_plugin(Profile& profile, const PluginRounds& rounds, Objective objective, double tolerance,
                        const std::vector<LosingRange>& dropped) {
  double worst_speedup = 0;
  bool first = true;
  for (auto& [op, collective] : profile.collectives) {
    const OpPoints points = points_of(rounds, op);
    if (points.sizes.empty() || points.sizes.size() != collective.results.sizes.size()) continue;
    collective.results.with_plugin = points.with_plugin;
    const Score s = score(objective, points.sizes, points.defaults, points.with_plugin, tolerance);
    collective.results.with_plugin_speedup_geomean = s.value;
    if (collective.guard) continue;
    worst_speedup = first ? s.value : std::min(worst_speedup, s.value);
    first = false;
  }
  std::string text = fmt::format(
      "A/B {} rounds in fresh workers: defaults against env + tuner plugin with this "
      "profile: {:+.1f}% (the tuned collective that gains least)",
      rounds.rounds, 100 * (worst_speedup - 1));
  if (!dropped.empty()) {
    text += "; per-size choices dropped, slower than the defaults under the plugin:";
    for (std::size_t i = 0; i < dropped.size(); ++i) text += (i ? ", " : " ") + describe(dropped[i]);
  }
  profile.provenance.plugin_confirmation = text;
}

std::string describe(const LosingRange& losing) {
  return fmt::format("{} {}..{} {}/{} ({:.2f}x at {})", losing.op, losing.range.min_bytes,
                     losing.range.max_bytes, losing.range.algo, losing.range.proto, losing.ratio,
                     losing.bytes);
}

}  // namespace nccltune
