#include "report/profile_summary.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "base/byte_size.h"
#include "base/duration.h"
#include "collectives/bench_peak.h"
#include "profile/nccl_names.h"
#include "report/profile_numbers.h"
#include "report/profile_text.h"
#include "report/profile_view.h"
#include "search/trial_counts.h"

namespace nccltune {

std::string describe_nccl_model(const Profile& profile, const std::string& name,
                                const CollectiveProfile& collective) {
  const NcclObserved& observed = profile.provenance.nccl_observed;
  const auto model = observed.nccl_model.find(name);
  const std::optional<std::string_view> logged = nccl_log_op_name(name);
  if (model == observed.nccl_model.end() || !observed.defaults || !logged) return "";
  const ProfileResults& r = collective.results;
  for (std::size_t i = r.sizes.size(); i-- > 0;) {
    const double measured = value_at(r.baseline, i);
    const std::string chose = observed_choice_at(*observed.defaults, *logged, r.sizes[i]);
    if (chose.empty() || !std::isfinite(measured)) continue;
    const ModelPair* pair = model_pair_for(model->second, chose);
    if (pair == nullptr || !pair->busbw) return "";
    std::string line = fmt::format(
        "NCCL's model: {} {} GB/s predicted at large sizes (its model's asymptotic busbw, latency left "
        "out); measured under the defaults at {}: {} GB/s",
        chose, format_busbw(*pair->busbw), format_byte_size(r.sizes[i]), format_busbw(measured));
    if (*pair->busbw > 0) line += fmt::format(" ({:.0f}%)", 100 * measured / *pair->busbw);
    return line;
  }
  return "";
}

namespace {

// One collective's per-size choices and its table of busbw, from its view (profile_view.h, the
// model `show --format json` renders too); under its name when `named` (unless the profile holds
// all_reduce alone, as every v1 profile does). NCCL's own choices and model are the world's (the
// tune logged NCCL on the world communicator): shown for it alone.
std::string render_collective(const Profile& profile, const CollectiveView& v, bool named, bool world) {
  const std::string& name = v.name;
  const CollectiveProfile& c = *v.profile;
  std::string out;
  if (named)
    out += fmt::format("{}{}\n", name, c.guard ? " (guard: measured against the defaults, not tuned)" : "");
  const std::string unmeasured = describe_unmeasured(c);
  if (!c.per_size.empty() || (!unmeasured.empty() && !c.guard)) {
    out += "per size (best measured algorithm/protocol per size range)\n";
    for (const SizeChoice& choice : c.per_size)
      out += fmt::format("  {:<18} {}\n", describe_range(choice), describe_choice(choice));
    if (!unmeasured.empty()) out += fmt::format("  {:<18} {}\n", unmeasured, kUnmeasuredChoice);
  }
  if (!v.switches.empty()) {
    out += "switches (where a choice gives way to the next; fits: time = latency + bytes / bandwidth)\n";
    for (const SwitchView& at : v.switches) out += "  " + describe_switch(at) + "\n";
  }
  if (v.sizes.empty()) return out;
  // NCCL's own choice per size, where its log showed one: what jobs get without the plugin.
  const bool nccl = v.nccl_logged;
  // With the plugin's confirmation: what env + the plugin gave, next to the env alone.
  const bool plugin = v.with_plugin.has_value();
  out += fmt::format("\n{:>10}  {:>14}  {:>11}  {:>8}  {}{}{}\n", "size", "defaults GB/s", "tuned GB/s",
                     "speedup", plugin ? fmt::format("{:>12}  {:>8}  ", "+plugin GB/s", "speedup") : "",
                     nccl ? fmt::format("{:<16}  ", "NCCL chose") : "", "measured best");
  for (const SizeView& size : v.sizes)
    out += fmt::format("{:>10}  {:>14}  {:>11}  {:>8}  {}{}{}\n", format_byte_size(size.bytes),
                       format_busbw(size.defaults_gbps), format_busbw(size.tuned_gbps),
                       format_speedup(size.speedup),
                       plugin ? fmt::format("{:>12}  {:>8}  ", format_busbw(size.with_plugin_gbps),
                                            format_speedup(size.with_plugin_speedup))
                              : "",
                       nccl ? fmt::format("{:<16}  ", size.nccl_chose.empty() ? "-" : size.nccl_chose) : "",
                       size.choice ? describe_choice(*size.choice) : "-");
  out += fmt::format("speedup  {} geometric mean over the objective's sizes, worst size {}\n",
                     format_speedup(v.tuned.geomean), format_speedup(v.worst_ratio));
  if (plugin)
    out +=
        fmt::format("         {} with the tuner plugin serving this profile (confirmed in fresh workers)\n",
                    format_speedup(v.with_plugin->geomean));
  if (c.plugin.status != PluginStatus::none)
    out += fmt::format("plugin   {}: {}\n", plugin_status_words(c.plugin.status), c.plugin.why);
  if (v.peak_gbps) {
    out += fmt::format("peak     {:g} GB/s ({})", *v.peak_gbps, v.peak_bottleneck);
    if (v.peak_percent)
      out += fmt::format(": busbw at {} is {:.0f}% of it{}", format_byte_size(v.sizes.back().bytes),
                         *v.peak_percent, *v.peak_percent > 100 ? kAbovePeakNote : "");
    out += "\n";
  } else if (!v.peak_bottleneck.empty()) {
    out += "peak     " + v.peak_bottleneck + "\n";
  }
  if (const std::string model = world ? describe_nccl_model(profile, name, c) : ""; !model.empty())
    out += "model    " + model + "\n";
  return out + "\n";
}

}  // namespace

std::string render_profile_summary(const Profile& profile, std::string_view origin,
                                   const std::vector<int>& stored_counts) {
  const ProfileShape& s = profile.shape;
  std::string out = fmt::format("profile  {}\n", origin);
  out += fmt::format("shape    {}\n", s.node_type_key);
  out += fmt::format("         {} ({} ranks){}\n", describe_profile_shape(s), s.ranks,
                     s.gpu.empty() ? "" : ", " + s.gpu);
  out +=
      fmt::format("         NVSwitch {}, {} NIC{} per node{}{}\n", s.nvswitch ? "yes" : "no", s.nics_per_node,
                  s.nics_per_node == 1 ? "" : "s", s.nic.empty() ? "" : " (" + s.nic + ")",
                  s.gpu_nic_affinity.empty() ? "" : ", GPU-NIC " + s.gpu_nic_affinity);
  out +=
      fmt::format("         NCCL {}, CUDA driver {}\n", s.nccl_version.empty() ? "unknown" : s.nccl_version,
                  s.cuda_driver.empty() ? "unknown" : s.cuda_driver);
  if (stored_counts.size() > 1 ||
      (stored_counts.size() == 1 && stored_counts.front() != s.nodes)) {  // the others beside it
    std::string counts;
    for (const int nodes : stored_counts)
      counts += (counts.empty() ? "" : ", ") + std::to_string(nodes) + (nodes == s.nodes ? " (this)" : "");
    const std::string what =
        s.mnnvl ? "NVLink domain counts (of " + std::to_string(s.host_count() / s.nodes) + " hosts each)"
                : std::string("node counts");
    out += "counts   " + what + " in the store for this node type: " + counts +
           " (a job of another count gets what they agree on: README, \"Every job size\")\n";
  }

  if (profile.keep_defaults) {
    out += "env      keep NCCL's defaults (why: the confirmation below)\n";
  } else if (profile.env.empty()) {
    out += "env      (empty)\n";
  } else {
    const char* label = "env      ";
    for (const auto& [name, value] : profile.env) {
      out += fmt::format("{}{}={}\n", label, name, value);
      label = "         ";
    }
  }

  for (const WithheldSetting& w : profile.withheld)
    out += "withheld " + describe_withheld(w) + "\n";
  for (const std::string& note : profile.notes) out += fmt::format("note     {}\n", note);
  // A v3 profile: the world's collectives under its heading, then each other communicator
  // shape's the same way under its own.
  const ProfileView view = view_profile(profile);
  const bool sections = view.sections.size() > 1;
  if (!sections && !profile.only_all_reduce()) out += "\n";
  for (const SectionView& section : view.sections) {
    const bool world = section.role == CommRole::world;
    if (sections)
      out += (world ? "\n" : "") +
             describe_section(section_shape(section), s.mnnvl) + "\n";
    if (!world && section.collectives.empty()) out += "(no collective measured)\n\n";
    for (const CollectiveView& collective : section.collectives)
      out += render_collective(profile, collective, sections || !profile.only_all_reduce(), world);
  }

  const ProfileProvenance& p = profile.provenance;
  // The failed configs are the list below, whatever an older profile counted in failed_trials.
  out += fmt::format("tuned    {} with {} in {} on {} host{}: {}\n",
                     p.date.empty() ? "(date unknown)" : p.date, p.tool.empty() ? "(tool unknown)" : p.tool,
                     format_duration(p.duration_s), p.hosts, p.hosts == 1 ? "" : "s",
                     describe_trial_counts({p.trials, 0, p.pairs}, profile.failed.size()));
  out += fmt::format("why      objective {}, noise floor {:.1f}%\n",
                     p.objective.empty() ? "balanced" : p.objective, 100 * p.noise_floor);
  if (!p.confirmation.empty()) out += fmt::format("         confirmation: {}\n", p.confirmation);
  if (!p.plugin_confirmation.empty())
    out += fmt::format("         with the plugin: {}\n", p.plugin_confirmation);
  out += render_nccl_observed_lines(p.nccl_observed);

  if (profile.failed.empty()) {
    out += "failed   none\n";
  } else {
    out += fmt::format("failed   {} config{} never chosen:\n", profile.failed.size(),
                       profile.failed.size() == 1 ? "" : "s");
    for (const FailedTrial& f : profile.failed)
      out += fmt::format("  {}: {}{}\n", describe_env(f.env), to_string(f.outcome),
                         f.reason.empty() ? "" : ": " + f.reason);
  }
  return out;
}

}  // namespace nccltune
