#include "report/profile_overview.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/duration.h"
#include "report/profile_text.h"
#include "report/profile_view.h"

namespace nccltune {

namespace {

std::optional<BestSize> best_of(const SpeedupView& speedup) {
  if (!speedup.best_bytes) return std::nullopt;
  return BestSize{speedup.best_ratio, *speedup.best_bytes};
}

OverviewRow overview_row(const SectionView& section, const CollectiveView& c) {
  OverviewRow row;
  row.shape = describe_section({section.nodes, section.ranks_per_node, section.role, {}});
  row.collective = c.name;
  row.guard = c.confirmation == Confirmation::guard;
  if (!row.guard)
    for (const SizeChoice& choice : c.profile->per_size)
      row.plugin_ranges.push_back(describe_range(choice) + " " + describe_choice(choice));
  row.env_speedup = c.tuned.geomean;
  row.env_best = best_of(c.tuned);
  if (c.with_plugin) {
    row.with_plugin_speedup = c.with_plugin->geomean;
    row.with_plugin_best = best_of(*c.with_plugin);
  }
  if (!c.sizes.empty()) row.largest_bytes = c.sizes.back().bytes;
  row.peak_percent = c.peak_percent;
  row.peak_note = c.peak_gbps ? fmt::format("{:g} GB/s ({})", *c.peak_gbps, c.peak_bottleneck) : c.peak_bottleneck;
  row.status = to_string(c.confirmation);
  std::replace(row.status.begin(), row.status.end(), '_', ' ');  // "not_served": "not served"
  row.why = c.reason;
  return row;
}

}  // namespace

ProfileOverview profile_overview(const Profile& profile) {
  const ProfileShape& s = profile.shape;
  const ProfileProvenance& p = profile.provenance;
  ProfileOverview out;
  // The failed configs are the profile's `failed` list, as show counts them.
  out.header = fmt::format("{} node{} x {} GPU{}{} \u00b7 NCCL {} \u00b7 {} trials, {} failed config{} \u00b7 {}",
                           s.nodes, s.nodes == 1 ? "" : "s", s.gpus_per_node, s.gpus_per_node == 1 ? "" : "s",
                           s.gpu.empty() ? "" : " (" + s.gpu + ")",
                           s.nccl_version.empty() ? "unknown" : s.nccl_version, p.trials, profile.failed.size(),
                           profile.failed.size() == 1 ? "" : "s", format_duration(p.duration_s));
  out.ships = describe_ships(profile);
  for (const WithheldSetting& w : profile.withheld) out.withheld.push_back(describe_withheld(w));
  for (const SectionView& section : view_profile(profile).sections)
    for (const CollectiveView& c : section.collectives) out.rows.push_back(overview_row(section, c));
  return out;
}

}  // namespace nccltune
