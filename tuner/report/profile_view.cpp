#include "report/profile_view.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>

#include "profile/nccl_names.h"
#include "profile/size_ranges.h"
#include "report/profile_numbers.h"

namespace nccltune {

std::string_view to_string(Confirmation status) {
  switch (status) {
    case Confirmation::confirmed: return "confirmed";
    case Confirmation::not_served: return "not_served";
    case Confirmation::withheld: return "withheld";
    case Confirmation::not_confirmed: return "not_confirmed";
    case Confirmation::env_only: return "env_only";
    case Confirmation::guard: return "guard";
  }
  return "env_only";
}

std::string confirmation_words(Confirmation status) {
  std::string words(to_string(status));
  std::replace(words.begin(), words.end(), '_', ' ');  // "not_served": "not served"
  return words;
}

std::optional<BestSize> best_size(const std::vector<std::uint64_t>& sizes, const std::vector<double>& baseline,
                                  const std::vector<double>& values) {
  std::optional<BestSize> best;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double ratio = speedup_of(value_at(baseline, i), value_at(values, i));
    if (std::isfinite(ratio) && (!best || ratio > best->ratio)) best = BestSize{sizes[i], ratio};
  }
  return best;
}

std::pair<Confirmation, std::string> confirmation_of(const Profile& profile,
                                                     const CollectiveProfile& collective) {
  if (collective.guard) return {Confirmation::guard, "measured against the defaults, not tuned"};
  switch (collective.plugin.status) {
    case PluginStatus::confirmed: return {Confirmation::confirmed, collective.plugin.why};
    case PluginStatus::not_served: return {Confirmation::not_served, collective.plugin.why};
    case PluginStatus::slower: return {Confirmation::withheld, collective.plugin.why};
    case PluginStatus::none: break;
  }
  if (profile.keep_defaults && collective.per_size.empty())
    return {Confirmation::withheld, "nothing beat NCCL's defaults beyond the noise: they stay"};
  if (!collective.per_size.empty())
    return {Confirmation::not_confirmed,
            "the tune did not confirm the per-size choices through the tuner plugin"};
  return {Confirmation::env_only, profile.provenance.confirmation};
}

namespace {

SpeedupView speedup_view(double geomean, const ProfileResults& r, const std::vector<double>& values) {
  return SpeedupView{geomean, best_size(r.sizes, r.baseline, values)};
}

}  // namespace

CollectiveView view_collective(const Profile& profile, const std::string& name,
                               const CollectiveProfile& collective, bool world) {
  const ProfileResults& r = collective.results;
  CollectiveView view;
  view.name = name;
  view.profile = &collective;
  view.tuned = speedup_view(r.speedup_geomean, r, r.tuned);
  if (!r.with_plugin.empty())
    view.with_plugin = speedup_view(r.with_plugin_speedup_geomean, r, r.with_plugin);
  view.worst_ratio = r.worst_size_ratio;
  std::tie(view.confirmation, view.reason) = confirmation_of(profile, collective);
  if (!collective.guard) view.plugin_choices = collective.per_size;
  view.peak_gbps = r.peak_busbw_gbps;
  view.peak_bottleneck = r.peak_bottleneck;
  // NCCL's own choice per size, where its log showed one: what jobs get without the plugin.
  const NcclObservation* nccl = world ? jobs_observation(profile.provenance.nccl_observed) : nullptr;
  view.nccl_logged = nccl != nullptr;
  const std::string_view logged = nccl_log_op_name(name).value_or("");
  for (std::size_t i = 0; i < r.sizes.size(); ++i) {
    SizeView size;
    size.bytes = r.sizes[i];
    size.defaults_gbps = value_at(r.baseline, i);
    size.tuned_gbps = value_at(r.tuned, i);
    size.with_plugin_gbps = value_at(r.with_plugin, i);
    size.speedup = speedup_of(size.defaults_gbps, size.tuned_gbps);
    size.with_plugin_speedup = speedup_of(size.defaults_gbps, size.with_plugin_gbps);
    size.peak_percent = percent_of_peak(r, i);
    if (const SizeChoice* choice = choice_for_size(collective.per_size, size.bytes)) size.choice = *choice;
    if (nccl && !logged.empty()) size.nccl_chose = observed_choice_at(*nccl, logged, size.bytes);
    view.sizes.push_back(std::move(size));
  }
  if (!view.sizes.empty()) view.peak_percent = view.sizes.back().peak_percent;
  for (const SizeSwitch& at : collective.switches) {
    const auto below = std::lower_bound(r.sizes.begin(), r.sizes.end(), at.bytes);
    const auto upper = std::find_if(collective.per_size.begin(), collective.per_size.end(),
                                    [&](const SizeChoice& range) { return range.min_bytes == at.bytes; });
    const bool in_per_size = upper != collective.per_size.begin() && upper != collective.per_size.end() &&
                             std::prev(upper)->max_bytes + 1 == at.bytes;
    view.switches.push_back(
        {at, at.fit == "crossing", static_cast<std::size_t>(below - r.sizes.begin()), in_per_size});
  }
  return view;
}

ProfileView view_profile(const Profile& profile) {
  ProfileView view;
  view.profile = &profile;
  SectionView world;
  world.nodes = profile.shape.nodes;
  world.ranks_per_node = profile.shape.gpus_per_node;
  for (const auto& [name, collective] : profile.collectives)
    world.collectives.push_back(view_collective(profile, name, collective, true));
  view.sections.push_back(std::move(world));
  for (const CommunicatorSection& section : profile.shapes) {
    SectionView other{section.role, section.nodes, section.ranks_per_node, {}};
    for (const auto& [name, collective] : section.collectives)
      other.collectives.push_back(view_collective(profile, name, collective, false));
    view.sections.push_back(std::move(other));
  }
  return view;
}

CommunicatorSection section_shape(const SectionView& section) {
  return {section.nodes, section.ranks_per_node, section.role, {}};
}

}  // namespace nccltune
