#include "profile/node_count_rule.h"

#include <algorithm>

#include "base/byte_size.h"
#include "profile/nccl_names.h"
#include "profile/size_ranges.h"

namespace nccltune {

namespace {

std::string choice_text(const SizeChoice& c) {
  std::string text = (c.algo.empty() ? "auto" : c.algo) + "/" + (c.proto.empty() ? "auto" : c.proto);
  if (c.channels > 0) text += ", " + std::to_string(c.channels) + " channels";
  return text;
}

bool same_choice(const SizeChoice& a, const SizeChoice& b) {
  return a.algo == b.algo && a.proto == b.proto && a.channels == b.channels;
}

// The ranges of `nearest` (of one collective) on which `other` agrees, within both measured
// ranges; what they disagree on goes to `withheld`.
std::vector<SizeChoice> agreeing_ranges(const std::string& op, const CollectiveProfile& near, int near_nodes,
                                        const CollectiveProfile& other, int other_nodes,
                                        std::vector<std::string>& withheld) {
  std::vector<std::uint64_t> starts;
  for (const auto* side : {&near, &other})
    for (const SizeChoice& c : side->per_size) starts.push_back(c.min_bytes);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<SizeChoice> kept;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::uint64_t from = starts[i];
    const SizeChoice* a = choice_for_size(near.per_size, from);
    const SizeChoice* b = choice_for_size(other.per_size, from);
    if (!a) continue;  // above what the nearest count measured: NCCL's own choice already
    std::uint64_t to = a->max_bytes;
    if (b) to = std::min(to, b->max_bytes);
    if (i + 1 < starts.size()) to = std::min(to, starts[i + 1] - 1);
    if (b && same_choice(*a, *b)) {
      if (!kept.empty() && same_choice(kept.back(), *a) && kept.back().max_bytes + 1 == from)
        kept.back().max_bytes = to;
      else
        kept.push_back({from, to, a->algo, a->proto, a->channels});
      continue;
    }
    withheld.push_back(op + " " + format_byte_size(from) + " .. " + format_byte_size(to) + ": " +
                       choice_text(*a) + " on " + std::to_string(near_nodes) + " nodes, " +
                       (b ? choice_text(*b) : "not measured") + " on " + std::to_string(other_nodes));
  }
  return kept;
}

}  // namespace

ServedProfile serve_unmeasured_count(int nodes, const MeasuredCount& below, const MeasuredCount& above,
                                     bool nearest_is_below) {
  const bool use_below = below.profile && (nearest_is_below || !above.profile);
  const MeasuredCount& near = use_below ? below : above;
  const MeasuredCount& other = use_below ? above : below;
  ServedProfile served;
  served.profile = *near.profile;
  served.sources.push_back(near.source);
  const int near_nodes = near.profile->shape.nodes;
  if (!other.profile) {
    const std::string why = std::string(nodes > near_nodes ? "above the largest" : "below the smallest") +
                            " measured node count (" + std::to_string(near_nodes) + "): left to NCCL";
    for (auto it = served.profile.env.begin(); it != served.profile.env.end();) {
      if (is_transport_setting(it->first)) {
        ++it;
        continue;
      }
      served.withheld.push_back(it->first + "=" + it->second + ": " + why);
      it = served.profile.env.erase(it);
    }
    for (auto& [op, collective] : served.profile.collectives) {
      if (!collective.per_size.empty()) served.withheld.push_back(op + " per-size choices: " + why);
      collective.per_size.clear();
    }
    return served;
  }
  served.sources.push_back(other.source);
  const int other_nodes = other.profile->shape.nodes;
  for (auto it = served.profile.env.begin(); it != served.profile.env.end();) {
    const auto there = other.profile->env.find(it->first);
    if (is_transport_setting(it->first) ||
        (there != other.profile->env.end() && there->second == it->second)) {
      ++it;
      continue;
    }
    served.withheld.push_back(
        it->first + "=" + it->second + ": " + std::to_string(other_nodes) + " nodes " +
        (there == other.profile->env.end() ? "leave it to NCCL" : "have " + there->second));
    it = served.profile.env.erase(it);
  }
  for (const auto& [name, value] : other.profile->env)
    if (!is_transport_setting(name) && !served.profile.env.count(name) && !near.profile->env.count(name))
      served.withheld.push_back(name + "=" + value + ": " + std::to_string(near_nodes) +
                                " nodes leave it to NCCL");
  for (auto& [op, collective] : served.profile.collectives) {
    const CollectiveProfile* there = other.profile->collective(op);
    if (!there) {
      if (!collective.per_size.empty())
        served.withheld.push_back(op + " per-size choices: not measured on " + std::to_string(other_nodes) +
                                  " nodes");
      collective.per_size.clear();
      continue;
    }
    collective.per_size = agreeing_ranges(op, collective, near_nodes, *there, other_nodes, served.withheld);
  }
  served.profile.keep_defaults = served.profile.env.empty() && near.profile->keep_defaults;
  return served;
}

}  // namespace nccltune
