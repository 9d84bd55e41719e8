#include "report/at_a_glance.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/byte_size.h"
#include "base/printable_text.h"
#include "report/profile_overview.h"
#include "report/profile_text.h"

namespace nccltune {

namespace {

constexpr std::size_t kListed = 2;  // suspects (and links) named on the fleet line; the rest counted
constexpr std::size_t kFieldLimit = 160;

std::string printable(std::string_view text) { return printable_excerpt(text, kFieldLimit); }

std::string fleet_line(const FleetSurvey& s) {
  std::vector<std::string> found;
  for (std::size_t i = 0; i < s.suspects.size() && i < kListed; ++i)
    found.push_back(printable(s.suspects[i].node) + " slow (" + printable(s.suspects[i].path) + ": " +
                    printable(s.suspects[i].evidence) + ")");
  if (s.suspects.size() > kListed) found.push_back(fmt::format("{} more slow nodes", s.suspects.size() - kListed));
  for (std::size_t i = 0; i < s.links.size() && i < kListed; ++i)
    found.push_back("link " + printable(s.links[i].nodes[0]) + " - " + printable(s.links[i].nodes[1]) + " (" +
                    printable(s.links[i].evidence) + ")");
  if (s.links.size() > kListed) found.push_back(fmt::format("{} more slow links", s.links.size() - kListed));
  for (std::size_t i = 0; i < s.failed.size() && i < kListed; ++i)
    found.push_back(printable(s.failed[i].node) + " failed (" + printable(s.failed[i].what) + ")");
  if (s.failed.size() > kListed) found.push_back(fmt::format("{} more failed nodes", s.failed.size() - kListed));
  std::string out = fmt::format("suspects {} node{} x {} GPU: ", s.nodes, s.nodes == 1 ? "" : "s", s.gpus_per_node);
  if (found.empty()) return out + "no suspect node or link, none failed\n";
  for (std::size_t i = 0; i < found.size(); ++i) out += (i ? "; " : "") + found[i];
  return out + "\n";
}

// "1.011x env alone, 1.082x with the plugin (confirmed)"
std::string gain(const OverviewRow& row) {
  if (row.guard) return format_speedup(row.env_speedup) + " (a guard: measured, not tuned)";
  std::string out = format_speedup(row.env_speedup) + " env alone";
  if (row.with_plugin_speedup) out += ", " + format_speedup(*row.with_plugin_speedup) + " with the plugin";
  return out + " (" + row.status + ")";
}

// The best size of the env alone or with the plugin, whichever is larger.
std::string best(const OverviewRow& row) {
  std::optional<BestSize> b = row.env_best;
  if (row.with_plugin_best && (!b || row.with_plugin_best->ratio > b->ratio)) b = row.with_plugin_best;
  return b ? fmt::format(", best {} at {}", format_speedup(b->ratio), format_byte_size(b->bytes)) : "";
}

}  // namespace

std::string render_at_a_glance(const Profile& profile, const FleetSurvey* fleet,
                               const std::vector<GlancePage>& pages) {
  const ProfileOverview overview = profile_overview(profile);
  std::string out = fleet ? fleet_line(*fleet) : "";
  std::vector<std::string> served;  // collectives the plugin has per-size choices for
  for (const OverviewRow& row : overview.rows)
    if (!row.plugin_ranges.empty() && std::find(served.begin(), served.end(), row.collective) == served.end())
      served.push_back(row.collective);
  out += "ships    env " + overview.ships;
  for (std::size_t i = 0; i < served.size(); ++i)
    out += (i ? ", " : " and the tuner plugin's per-size choices for ") + served[i];
  out += "\n";
  if (!overview.withheld.empty()) {
    out += "withheld";
    for (std::size_t i = 0; i < overview.withheld.size(); ++i) out += (i ? "; " : " ") + overview.withheld[i];
    out += "\n";
  }
  // One line per collective: its first row (the world's, where measured) in full, the other
  // shapes' gains after it.
  std::vector<std::string> names;
  for (const OverviewRow& row : overview.rows)
    if (std::find(names.begin(), names.end(), row.collective) == names.end()) names.push_back(row.collective);
  for (const std::string& name : names) {
    std::string line;
    for (const OverviewRow& row : overview.rows) {
      if (row.collective != name) continue;
      const std::string shape = row.shape.substr(0, row.shape.find(':'));  // "world", "rail", "node"
      if (line.empty())
        line = fmt::format("gain     {:<15} {}{}{}", name, shape == "world" ? "" : shape + ": ", gain(row),
                           best(row));
      else
        line += "; " + shape + ": " + gain(row);
    }
    out += line + "\n";
  }
  for (const GlancePage& page : pages) out += fmt::format("{:<8} {}\n", page.label, printable(page.path));
  return out;
}

}  // namespace nccltune
