#include "report/profile_overview.h"

#include <fmt/format.h>

#include <cmath>

#include "base/duration.h"
#include "report/profile_summary.h"

namespace nccltune {

namespace {

// What the plugin's confirmation (or its absence) says of one collective's per-size choices.
void set_status(const CollectiveProfile& c, OverviewRow& row) {
  if (c.guard) {
    row.status = "guard";
    row.why = "measured against the defaults, not tuned";
  } else if (c.plugin.status != PluginStatus::none) {
    row.status = plugin_status_words(c.plugin.status);
    row.why = c.plugin.why;
  } else if (!c.results.with_plugin.empty()) {  // a profile written before the plugin's verdict
    row.status = "measured with the plugin";
  } else if (c.per_size.empty()) {
    row.status = "env only";
  } else {
    row.status = "not confirmed";
    row.why = "the per-size choices were not measured through the tuner plugin";
  }
}

OverviewRow overview_row(const std::string& shape, const std::string& name, const CollectiveProfile& c) {
  OverviewRow row;
  row.shape = shape;
  row.collective = name;
  row.guard = c.guard;
  if (!c.guard)
    for (const SizeChoice& choice : c.per_size)
      row.plugin_ranges.push_back(describe_range(choice) + " " + describe_choice(choice));
  const ProfileResults& r = c.results;
  row.env_speedup = r.speedup_geomean;
  row.env_best = best_size(r, r.tuned);
  if (!r.with_plugin.empty()) {
    row.with_plugin_speedup = r.with_plugin_speedup_geomean;
    row.with_plugin_best = best_size(r, r.with_plugin);
  }
  if (!r.sizes.empty()) {
    row.largest_bytes = r.sizes.back();
    row.peak_percent = percent_of_peak(r, r.sizes.size() - 1);
  }
  row.peak_note = r.peak_busbw_gbps ? fmt::format("{:g} GB/s ({})", *r.peak_busbw_gbps, r.peak_bottleneck)
                                    : r.peak_bottleneck;
  set_status(c, row);
  return row;
}

}  // namespace

std::optional<BestSize> best_size(const ProfileResults& results, const std::vector<double>& values) {
  std::optional<BestSize> best;
  for (std::size_t i = 0; i < results.sizes.size(); ++i) {
    const double ratio = speedup_of(value_at(results.baseline, i), value_at(values, i));
    if (std::isfinite(ratio) && (!best || ratio > best->ratio)) best = BestSize{ratio, results.sizes[i]};
  }
  return best;
}

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
  out.ships = profile.keep_defaults ? "NCCL's defaults (nothing beat them beyond the noise floor)"
              : profile.env.empty() ? "no variables"
                                    : describe_env(profile.env);
  for (const WithheldSetting& w : profile.withheld) out.withheld.push_back(describe_env(w.env) + ": " + w.why);
  const std::string world = describe_section({s.nodes, s.gpus_per_node, CommRole::world, {}});
  for (const auto& [name, collective] : profile.collectives)
    out.rows.push_back(overview_row(world, name, collective));
  for (const CommunicatorSection& section : profile.shapes)
    for (const auto& [name, collective] : section.collectives)
      out.rows.push_back(overview_row(describe_section(section), name, collective));
  return out;
}

}  // namespace nccltune
