#include "report/report_html.h"

#include <fmt/format.h>

#include <cmath>

#include "base/byte_size.h"
#include "base/duration.h"
#include "report/fleet_section.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/node_counts_section.h"
#include "report/node_diagram.h"
#include "report/observed_section.h"
#include "report/profile_summary.h"
#include "report/profile_text.h"
#include "report/profile_view.h"
#include "report/svg_chart.h"

namespace nccltune {

namespace {

constexpr const char* kDefaultsColor = "#64748b";
constexpr const char* kTunedColor = "#16a34a";
constexpr const char* kWithPluginColor = "#15803d";
constexpr const char* kPeakColor = "#dc2626";
constexpr const char* kCandidateColors[] = {"#7c3aed", "#0284c7", "#d97706", "#db2777", "#0d9488"};

// The report's own parts, after the base every page shares (html_page.h): the overview table and
// its status, the settings' columns, warnings and the unmeasured sizes' rows.
constexpr const char* kReportStyle = R"(.sub { color: #6b7280; font-size: 12px; }
.status { font-weight: 600; }
p.ships { margin: 0 0 10px; }
table.overview td { padding: 7px 10px; }
table.overview .range { display: block; white-space: nowrap; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); gap: 20px; }
.warn { color: #92400e; background: #fffbeb; border-left: 3px solid #f59e0b; padding: 6px 10px; margin: 10px 0 0; }
tr.unmeasured td { color: #6b7280; font-style: italic; }
tr.switch td { color: #334155; background: #f8fafc; font-size: 12px; }
ul.switches { margin: 8px 0 0; padding-left: 18px; font-size: 13px; }
)";

std::string fixed(double value, int digits) {
  return std::isfinite(value) ? fmt::format("{:.{}f}", value, digits) : std::string("n/a");
}

const char* ratio_class(double ratio, double noise) {
  if (!std::isfinite(ratio)) return "neutral";
  return ratio > 1 + noise ? "good" : ratio < 1 - noise ? "bad" : "neutral";
}

std::string objective_meaning(const std::string& objective) {
  if (objective == "bandwidth") return "geometric mean of the per-size speedup over sizes from 1 MiB";
  if (objective == "latency") return "geometric mean of the per-size speedup over sizes up to 64 KiB";
  return "geometric mean of the per-size speedup over all sizes, no size worse than the tolerance";
}

// "" for the one all_reduce of such a profile, else " (all_gather)".
std::string of_collective(const Profile& p, const std::string& op) {
  return p.only_all_reduce() ? "" : " (" + op + ")";
}

// An HTML id part: "" as above, else "-all_gather".
std::string id_suffix(const Profile& p, const std::string& op) {
  return p.only_all_reduce() ? "" : "-" + op;
}

std::string speedup_chain(const CollectiveView& c, double noise) {
  std::string out = fmt::format("<span class=\"range\">1.000x &rarr; <span class=\"{}\">{}</span>",
                                ratio_class(c.tuned.geomean, noise), html_text(format_speedup(c.tuned.geomean)));
  if (c.with_plugin)
    out += fmt::format(" &rarr; <span class=\"{}\">{}</span>", ratio_class(c.with_plugin->geomean, noise),
                       html_text(format_speedup(c.with_plugin->geomean)));
  else if (c.confirmation != Confirmation::guard)
    out += " &rarr; <span class=\"neutral\">not measured</span>";
  return out + "</span>";
}

std::string best_cell(const CollectiveView& c) {
  const auto at = [](const std::optional<BestSize>& best) {
    return best ? format_speedup(best->ratio) + " at " + format_byte_size(best->bytes) : std::string("n/a");
  };
  std::string out = "<span class=\"range\">" + html_text(at(c.tuned.best)) + "</span>";
  if (c.with_plugin) out += "<span class=\"range\">plugin: " + html_text(at(c.with_plugin->best)) + "</span>";
  return out;
}

std::string peak_cell(const CollectiveView& c) {
  const std::string note =
      c.peak_gbps ? fmt::format("{:g} GB/s ({})", *c.peak_gbps, c.peak_bottleneck) : c.peak_bottleneck;
  if (!c.peak_percent) return note.empty() ? "-" : "<span class=\"sub\">" + html_text(note) + "</span>";
  return fmt::format("{:.0f}% at {}<br><span class=\"sub\">of {}</span>", *c.peak_percent,
                     html_text(format_byte_size(c.sizes.back().bytes)), html_text(note));
}

// "world: 2 nodes x 8 ranks" as the role, and its size below it.
std::string shape_cell(const SectionView& section, bool mnnvl) {
  const std::string shape = describe_section(section_shape(section), mnnvl);
  const std::size_t colon = shape.find(": ");
  return colon == std::string::npos ? html_text(shape)
                                    : html_text(shape.substr(0, colon)) + "<br><span class=\"sub\">" +
                                          html_text(shape.substr(colon + 2)) + "</span>";
}

std::string overview_row(const SectionView& section, const CollectiveView& c, double noise, bool mnnvl) {
  std::string ranges;
  for (const SizeChoice& choice : c.plugin_choices)
    ranges += "<span class=\"range\">" + html_text(describe_range(choice) + " " + describe_choice(choice)) + "</span>";
  if (ranges.empty()) ranges = c.confirmation == Confirmation::guard ? "-" : "nothing (env alone)";
  return fmt::format(
      "<tr><td>{}</td><td><strong>{}</strong></td><td class=\"mono\">{}</td><td class=\"num\">{}</td>"
      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td><span class=\"status\">{}</span>{}</td></tr>\n",
      shape_cell(section, mnnvl), html_text(c.name), ranges, speedup_chain(c, noise), best_cell(c), peak_cell(c),
      html_text(confirmation_words(c.confirmation)),
      c.reason.empty() ? "" : "<br><span class=\"sub\">" + html_text(c.reason) + "</span>");
}

// The answer first: what ships and, per collective and communicator shape, what it buys.
std::string overview_section(const ProfileView& view) {
  const Profile& p = *view.profile;
  bool plugin_serves = false;
  for (const SectionView& section : view.sections)
    for (const CollectiveView& c : section.collectives) plugin_serves = plugin_serves || !c.plugin_choices.empty();
  std::string out = "<section id=\"overview\"><h2>At a glance</h2>\n";
  out += "<p class=\"ships\"><strong>Ships:</strong> env <code>" + html_text(describe_ships(p)) + "</code>";
  out += plugin_serves ? ", and the tuner plugin's per-size choices below" : ", no per-size choices for the tuner plugin";
  out += ".</p>\n";
  for (const WithheldSetting& w : p.withheld)
    out += "<p class=\"warn\">Withheld from env: " + html_text(describe_withheld(w)) + "</p>\n";
  out +=
      "<table class=\"overview\"><tr><th>shape</th><th>collective</th><th>tuner plugin serves</th>"
      "<th>defaults &rarr; env &rarr; env + plugin<br>(geometric mean)</th><th>best size</th>"
      "<th>% of hardware peak</th><th>status</th></tr>\n";
  for (const SectionView& section : view.sections)
    for (const CollectiveView& c : section.collectives)
      out += overview_row(section, c, p.provenance.noise_floor, p.shape.mnnvl);
  return out + "</table>\n</section>\n";
}

// "2 nodes x 8 GPUs (NVIDIA H100) · NCCL 2.28.9 · 92 trials, 1 failed config · 9m12s": the failed
// configs are the profile's `failed` list, as show counts them.
std::string headline(const Profile& profile) {
  const ProfileShape& s = profile.shape;
  const ProfileProvenance& p = profile.provenance;
  return fmt::format("{}{} \u00b7 NCCL {} \u00b7 {} trials, {} failed config{} \u00b7 {}", describe_profile_shape(s),
                     s.gpu.empty() ? "" : " (" + s.gpu + ")", s.nccl_version.empty() ? "unknown" : s.nccl_version,
                     p.trials, profile.failed.size(), profile.failed.size() == 1 ? "" : "s",
                     format_duration(p.duration_s));
}

// Where the choices switch between measured sizes, and why: one item per switch.
std::string switch_list(const CollectiveView& c) {
  if (c.switches.empty()) return "";
  std::string out = "<ul class=\"switches\">\n";
  for (const SwitchView& at : c.switches) out += "<li>" + html_text(describe_switch(at)) + "</li>\n";
  return out + "</ul>\n";
}

std::string settings_section(const ProfileView& view) {
  const Profile& p = *view.profile;
  std::string env;
  if (p.keep_defaults) {
    env = "<p><strong>Keep NCCL's defaults.</strong> The profile sets no variable: " +
          html_text(p.provenance.confirmation.empty() ? "nothing beat them beyond the noise floor"
                                                      : p.provenance.confirmation) +
          ".</p>\n";
  } else if (p.env.empty()) {
    env = "<p>No variables.</p>\n";
  } else {
    env = "<table><tr><th>variable</th><th>value</th></tr>\n";
    for (const auto& [name, value] : p.env)
      env += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td></tr>\n", html_text(name),
                         html_text(value));
    env += "</table>\n";
  }
  std::string ranges;
  bool switches = false;
  for (const CollectiveView& c : view.sections.front().collectives) {
    const std::string& op = c.name;
    const CollectiveProfile& collective = *c.profile;
    if (collective.guard) continue;
    const std::string unmeasured = describe_unmeasured(collective);
    if (!p.only_all_reduce()) ranges += "<h4>" + html_text(op) + "</h4>\n";
    if (collective.per_size.empty() && unmeasured.empty()) {
      ranges += "<p>None recorded.</p>\n";
      continue;
    }
    ranges += "<table><tr><th>message size</th><th>algorithm / protocol</th></tr>\n";
    for (const SizeChoice& choice : collective.per_size)
      ranges += fmt::format("<tr><td class=\"mono\">{}</td><td>{}</td></tr>\n",
                            html_text(describe_range(choice)), html_text(describe_choice(choice)));
    if (!unmeasured.empty())
      ranges += fmt::format("<tr class=\"unmeasured\"><td class=\"mono\">{}</td><td>{}</td></tr>\n",
                            html_text(unmeasured), html_text(kUnmeasuredChoice));
    ranges += "</table>\n" + switch_list(c);
    switches = switches || !c.switches.empty();
  }
  if (ranges.empty())
    ranges = "<p>None recorded.</p>\n";
  else
    ranges +=
        "<p class=\"note\">The fastest NCCL_ALGO/NCCL_PROTO pair the environment allows, measured "
        "at each size with the environment's other settings." +
        std::string(switches
                        ? " Between two measured sizes with different winners, a range ends where NCCL's "
                          "cost model (time = latency + bytes / bandwidth), fitted to each, says they cross, "
                          "or at the size measured when the fits do not cross there."
                        : "") +
        "</p>\n";
  return fmt::format(
      "<section id=\"settings\"><h2>Chosen settings</h2><div class=\"columns\">\n"
      "<div><h3>Environment</h3>\n{}</div>\n<div><h3>Per message size</h3>\n{}</div>\n</div></section>\n",
      env, ranges);
}

std::string why_section(const Profile& p) {
  const ProfileProvenance& v = p.provenance;
  const std::string objective = v.objective.empty() ? "balanced" : v.objective;
  std::string out = "<section id=\"why\"><h2>Why these settings</h2><dl>\n";
  out += fmt::format("<dt>objective</dt><dd><strong>{}</strong>: {}</dd>\n", html_text(objective),
                     html_text(objective_meaning(objective)));
  out += fmt::format(
      "<dt>noise floor</dt><dd>{}% (spread of repeated default runs; smaller gains count as none)</dd>\n",
      fixed(100 * v.noise_floor, 1));
  out += fmt::format("<dt>confirmation</dt><dd>{}</dd>\n",
                     v.confirmation.empty() ? "not recorded" : html_text(v.confirmation));
  if (!v.plugin_confirmation.empty())
    out += fmt::format("<dt>with the tuner plugin</dt><dd>{}</dd>\n", html_text(v.plugin_confirmation));
  out += fmt::format("<dt>run</dt><dd>{} trials ({} failed) in {} on {} host{}</dd>\n", v.trials,
                     v.failed_trials, html_text(format_duration(v.duration_s)), v.hosts,
                     v.hosts == 1 ? "" : "s");
  out +=
      fmt::format("<dt>tuned</dt><dd>{} by {}</dd>\n", html_text(v.date.empty() ? "(date unknown)" : v.date),
                  html_text(v.tool.empty() ? "(tool unknown)" : v.tool));
  for (const std::string& note : p.notes) out += fmt::format("<dt>note</dt><dd>{}</dd>\n", html_text(note));
  return out + "</dl></section>\n";
}

// What NCCL's own log said while the tune measured: its network and channels under the defaults
// and under the shipped env, explain's verdicts, and the sizes where NCCL's choice is not the
// fastest measured.
std::string nccl_section(const Profile& p) {
  const NcclObserved& o = p.provenance.nccl_observed;
  std::string out = "<section id=\"nccl\"><h2>What NCCL did</h2>\n";
  if (o.empty())
    return out +
           "<p>Not recorded: this profile was tuned before nccltune read NCCL's log, or NCCL printed "
           "nothing.</p></section>\n";
  out += "<dl>\n";
  if (o.defaults) out += "<dt>defaults</dt><dd>" + html_text(describe_observation(*o.defaults)) + "</dd>\n";
  if (o.shipped) out += "<dt>with the env</dt><dd>" + html_text(describe_observation(*o.shipped)) + "</dd>\n";
  for (const ObservedVerdict& v : o.verdicts)
    out += fmt::format("<dt class=\"{}\">{} {}</dt><dd>{}</dd>\n", v.level == "info" ? "" : "flag",
                       html_text(v.level), html_text(v.check), html_text(v.message));
  for (const ChoiceContradiction& c : o.contradictions)
    out += "<dt>NCCL chose otherwise</dt><dd>" + html_text(describe_contradiction(c)) + "</dd>\n";
  for (const auto& [op, collective] : p.collectives)
    if (const std::string model = describe_nccl_model(p, op, collective); !model.empty())
      out += "<dt>NCCL's model" + html_text(p.only_all_reduce() ? "" : " (" + op + ")") + "</dt><dd>" +
             html_text(model) + "</dd>\n";
  return out + "</dl></section>\n";
}

std::string curves_section(const ReportInput& in, const CollectiveView& v) {
  const std::string& op = v.name;
  const ProfileResults& r = v.profile->results;
  const std::string open = "<section id=\"busbw" + id_suffix(in.profile, op) + "\"><h2>Bus bandwidth" +
                           html_text(of_collective(in.profile, op)) + "</h2>\n";
  if (r.sizes.empty()) return open + "<p>The profile holds no results.</p></section>\n";
  static const std::vector<CandidateCurve> kNone;
  const auto found = in.candidates.find(op);
  const std::vector<CandidateCurve>& candidates = found == in.candidates.end() ? kNone : found->second;
  LineChart chart;
  chart.title =
      "busbw against message size: defaults, tuned and the best other candidates; the shaded band is the "
      "gap between tuned and the defaults";
  chart.y_label = "busbw (GB/s, log scale)";
  chart.y_scale = YScale::log;  // the latency-bound small sizes are orders of magnitude below the peak
  // The first series is drawn on top: the tuned curve, where it runs along the defaults'.
  if (!r.with_plugin.empty())  // what the profile delivers with the tuner plugin, confirmed
    chart.series.push_back({"with-plugin",
                            "tuned env + tuner plugin (per-size choices; shaded: its gap to the env alone)",
                            kWithPluginColor, false, r.sizes, r.with_plugin});
  chart.series.push_back({"tuned", "tuned profile (env only; shaded: its gap to the defaults)", kTunedColor,
                          false, r.sizes, r.tuned});
  chart.bands.push_back({"tuned", "defaults"});
  if (!r.with_plugin.empty()) chart.bands.push_back({"with-plugin", "tuned"});
  chart.series.push_back({"defaults", "NCCL defaults", kDefaultsColor, false, r.sizes, r.baseline});
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const CandidateCurve& c = candidates[i];
    chart.series.push_back({"candidate-" + std::to_string(i + 1),
                            fmt::format("candidate {}: {} ({:.3f}x, {} phase)", i + 1, describe_env(c.env),
                                        c.score, to_string(c.phase)),
                            kCandidateColors[i % std::size(kCandidateColors)], true, r.sizes, c.busbw});
  }
  // A marker where each choice switches: on the size axis, between the measured points.
  for (const SwitchView& at : v.switches)
    chart.markers.push_back({at.at.bytes, "switch " + format_size_near(at.at.bytes), describe_switch(at)});
  if (r.peak_busbw_gbps)  // a flat line at the hardware peak (it may lie below an NVLS curve)
    chart.series.push_back(
        {"peak", fmt::format("hardware peak {:g} GB/s ({})", *r.peak_busbw_gbps, r.peak_bottleneck),
         kPeakColor, true, r.sizes, std::vector<double>(r.sizes.size(), *r.peak_busbw_gbps)});
  std::string out = open + render_line_chart(chart);
  if (!r.peak_busbw_gbps && !r.peak_bottleneck.empty())
    out += "<p class=\"note\">Hardware peak " + html_text(r.peak_bottleneck) + "</p>\n";
  if (!in.journal_note.empty()) out += "<p class=\"note\">" + html_text(in.journal_note) + "</p>\n";
  return out + "</section>\n";
}

// The per-size table and bars of one collective's view. `shape`: nullptr for the world's
// collective; another communicator shape's section (profile v3) gets its own id and its name in
// the heading.
std::string speedup_section(const Profile& p, const CollectiveView& v, const SectionView* shape = nullptr) {
  if (v.sizes.empty()) return "";
  const double noise = p.provenance.noise_floor;
  SpeedupBars bars;
  const bool plugin = v.with_plugin.has_value();
  bars.title = plugin ? "speedup over NCCL's defaults per message size: the env alone and env + the tuner plugin"
                      : "speedup of the tuned profile over NCCL's defaults, per message size";
  bars.noise_floor = noise;
  for (const SizeView& size : v.sizes) {
    bars.bytes.push_back(size.bytes);
    bars.ratios.push_back(size.speedup);
    if (plugin) bars.plugin_ratios.push_back(size.with_plugin_speedup);
  }
  // NCCL's own choice where its log showed one, under the env jobs get (without the tuner plugin).
  const bool nccl = v.nccl_logged;
  std::string table =
      "<table><tr><th class=\"num\">size</th><th class=\"num\">defaults GB/s</th><th class=\"num\">tuned "
      "GB/s</th>"
      "<th class=\"num\">speedup</th>" +
      std::string(plugin ? "<th class=\"num\">+plugin GB/s</th><th class=\"num\">speedup</th>" : "") +
      std::string(v.peak_gbps ? "<th class=\"num\">% of peak</th>" : "") +
      (nccl ? "<th>NCCL chose</th>" : "") + "<th>measured best</th></tr>\n";
  // A row per switch between the measured sizes around it, across the table.
  const int columns = 5 + (plugin ? 2 : 0) + (v.peak_gbps ? 1 : 0) + (nccl ? 1 : 0);
  const auto switch_rows = [&](std::size_t sizes_below) {
    std::string rows;
    for (const SwitchView& at : v.switches)
      if (at.sizes_below == sizes_below)
        rows += fmt::format("<tr class=\"switch\"><td colspan=\"{}\">switch: {}</td></tr>\n", columns,
                            html_text(describe_switch(at)));
    return rows;
  };
  for (std::size_t i = 0; i < v.sizes.size(); ++i) {
    const SizeView& size = v.sizes[i];
    table += switch_rows(i);
    const std::string nccl_cell =
        nccl ? "<td class=\"mono\">" + (size.nccl_chose.empty() ? std::string("-") : html_text(size.nccl_chose)) +
                   "</td>"
             : "";
    const std::string peak_share =
        v.peak_gbps ? "<td class=\"num\">" +
                          (size.peak_percent ? fmt::format("{:.0f}%", *size.peak_percent) : std::string("-")) +
                          "</td>"
                    : "";
    const std::string plugin_cells =
        plugin ? fmt::format("<td class=\"num\">{}</td><td class=\"num {}\">{}</td>", format_busbw(size.with_plugin_gbps),
                             ratio_class(size.with_plugin_speedup, noise), format_speedup(size.with_plugin_speedup))
               : "";
    table += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num {}\">{}</td>{}{}{}<td>{}</td></tr>\n",
        format_byte_size(size.bytes), format_busbw(size.defaults_gbps), format_busbw(size.tuned_gbps),
        ratio_class(size.speedup, noise), format_speedup(size.speedup), plugin_cells, peak_share, nccl_cell,
        size.choice ? html_text(describe_choice(*size.choice)) : "-");
  }
  table += switch_rows(v.sizes.size()) + "</table>\n";
  const std::string& op = v.name;
  const std::string id = shape ? "-" + std::string(to_string(shape->role)) + "-" + op : id_suffix(p, op);
  const std::string of =
      shape ? " (" + op + ", " + describe_section(section_shape(*shape), p.shape.mnnvl) + ")" : of_collective(p, op);
  return "<section id=\"speedup" + id + "\"><h2>Speedup per message size" + html_text(of) + "</h2>\n" +
         render_speedup_bars(bars) +
         "<p class=\"note\">Green: faster than the defaults beyond the noise floor (grey band); red: "
         "slower.</p>\n" +
         table + "</section>\n";
}

std::string node_section(const ReportInput& in) {
  std::string out = "<section id=\"node\"><h2>Node</h2>\n";
  if (!in.topology) {
    out +=
        "<p>No node topology was given. <code>nccltune report --topology SRC</code> draws one from a "
        "snapshot "
        "(<code>nccltune topo --capture DIR</code> on a tuned node), <code>nvidia-smi:FILE</code>, "
        "<code>nvidia-smi-q:FILE</code> or <code>hwloc:FILE</code>.</p>\n";
    return out + "</section>\n";
  }
  const NodeTopology& t = *in.topology;
  const ProfileShape& s = in.profile.shape;
  out += fmt::format("<p class=\"note\">Topology of host <code>{}</code> read from <code>{}</code>.</p>\n",
                     html_text(t.host.empty() ? "(unknown)" : t.host), html_text(in.topology_source));
  if (static_cast<int>(t.gpus.size()) != s.gpus_per_node ||
      static_cast<int>(t.nics.size()) != s.nics_per_node)
    out += fmt::format(
        "<p class=\"warn\">This topology ({} GPUs, {} NICs) differs from the shape the profile was tuned on "
        "({} GPUs, "
        "{} NICs per node): it is not a picture of the nodes that were measured.</p>\n",
        t.gpus.size(), t.nics.size(), s.gpus_per_node, s.nics_per_node);
  out += render_node_diagram(t);
  for (const std::string& note : t.notes) out += "<p class=\"note\">" + html_text(note) + "</p>\n";
  return out + "</section>\n";
}

std::string failed_section(const Profile& p) {
  std::string out = "<section id=\"failed\"><h2>Failed trials</h2>\n";
  if (p.failed.empty())
    return out + "<p>None: every configuration tried ran and gave correct data.</p></section>\n";
  out +=
      "<p class=\"note\">Configurations that failed to initialise, hung, crashed or gave wrong data are "
      "recorded "
      "and never chosen, whatever their speed.</p>\n";
  out += "<table><tr><th>configuration</th><th>outcome</th><th>reason</th></tr>\n";
  for (const FailedTrial& f : p.failed)
    out += fmt::format("<tr><td><code>{}</code></td><td class=\"outcome\">{}</td><td>{}</td></tr>\n",
                       html_text(describe_env(f.env)), html_text(to_string(f.outcome)), html_text(f.reason));
  return out + "</table></section>\n";
}

}  // namespace

std::string render_report_html(const ReportInput& in) {
  const Profile& p = in.profile;
  std::string out = html_page_head("nccltune report: " + p.shape.node_type_key, kReportStyle);
  out += "<header><h1>NCCL tuning report</h1>\n";
  out += fmt::format("<p class=\"key\">{} &middot; {} &middot; profile {}</p>\n",
                     html_text(p.shape.node_type_key),
                     html_text(p.shape.mnnvl ? describe_profile_shape(p.shape)
                                             : count_nodes(p.shape.nodes, NodeWord::node)),
                     html_text(in.profile_source));
  const ProfileView view = view_profile(p);
  out += "<p class=\"glance\">" + html_text(headline(p)) + "</p>\n";
  if (!in.title.empty()) out += "<div class=\"banner\">" + html_text(in.title) + "</div>\n";
  out += "</header>\n";
  out += overview_section(view);
  // Per collective the answer (speedup per size) first, then the busbw curves behind it.
  for (const CollectiveView& c : view.sections.front().collectives) {
    out += speedup_section(p, c);
    out += curves_section(in, c);
  }
  for (std::size_t i = 1; i < view.sections.size(); ++i)
    for (const CollectiveView& c : view.sections[i].collectives) out += speedup_section(p, c, &view.sections[i]);
  out += render_node_counts_section(in.node_counts, p.shape.nodes);
  out += settings_section(view);
  out += why_section(p);
  out += nccl_section(p);
  out += node_section(in);
  out += failed_section(p);
  if (in.fleet) out += render_fleet_section(*in.fleet, in.fleet_source);
  if (in.observed) out += render_observed_section(*in.observed, in.observed_source);
  return out + html_page_foot(in.generated_by);
}

std::string render_fleet_report_html(const FleetSurvey& survey, const std::string& source,
                                     const std::string& title, const std::string& generated_by) {
  std::string out = html_page_head(fmt::format("nccltune fleet survey: {} nodes", survey.nodes), "");
  out += "<header><h1>NCCL fleet survey</h1>\n";
  out += "<p class=\"key\">survey " + html_text(source) + "</p>\n";
  out += "<p class=\"glance\">" + html_text(describe_fleet(survey)) + "</p>\n";
  if (!title.empty()) out += "<div class=\"banner\">" + html_text(title) + "</div>\n";
  out += "</header>\n";
  out += render_fleet_section(survey, source, false);
  return out + html_page_foot(generated_by);
}

}  // namespace nccltune
