#include "report/at_a_glance.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/byte_size.h"
#include "base/printable_text.h"
#include "report/profile_text.h"
#include "report/profile_view.h"

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
std::string glance_gain(const CollectiveView& c) {
  if (c.confirmation == Confirmation::guard) return format_speedup(c.tuned.geomean) + " (a guard: measured, not tuned)";
  std::string out = format_speedup(c.tuned.geomean) + " env alone";
  if (c.with_plugin) out += ", " + format_speedup(c.with_plugin->geomean) + " with the plugin";
  return out + " (" + confirmation_words(c.confirmation) + ")";
}

// The best size of the env alone or with the plugin, whichever is larger.
std::string glance_best(const CollectiveView& c) {
  std::optional<BestSize> b = c.tuned.best;
  if (c.with_plugin && c.with_plugin->best && (!b || c.with_plugin->best->ratio > b->ratio)) b = c.with_plugin->best;
  return b ? fmt::format(", best {} at {}", format_speedup(b->ratio), format_byte_size(b->bytes)) : "";
}

}  // namespace

std::string render_at_a_glance(const Profile& profile, const FleetSurvey* fleet,
                               const std::vector<GlancePage>& pages) {
  const ProfileView view = view_profile(profile);
  std::string out = fleet ? fleet_line(*fleet) : "";
  std::vector<std::string> served;  // collectives the plugin has per-size choices for
  for (const SectionView& section : view.sections)
    for (const CollectiveView& c : section.collectives)
      if (!c.plugin_choices.empty() && std::find(served.begin(), served.end(), c.name) == served.end())
        served.push_back(c.name);
  out += "ships    env " + describe_ships(profile);
  for (std::size_t i = 0; i < served.size(); ++i)
    out += (i ? ", " : " and the tuner plugin's per-size choices for ") + served[i];
  out += "\n";
  if (!profile.withheld.empty()) {
    out += "withheld";
    for (std::size_t i = 0; i < profile.withheld.size(); ++i)
      out += (i ? "; " : " ") + describe_withheld(profile.withheld[i]);
    out += "\n";
  }
  // One line per collective: its first shape's (the world's, where measured) in full, the other
  // shapes' gains after it.
  std::vector<std::string> names;
  for (const SectionView& section : view.sections)
    for (const CollectiveView& c : section.collectives)
      if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
  for (const std::string& name : names) {
    std::string line;
    for (const SectionView& section : view.sections)
      for (const CollectiveView& c : section.collectives) {
        if (c.name != name) continue;
        const std::string shape(to_string(section.role));  // "world", "rail", "node"
        if (line.empty())
          line = fmt::format("gain     {:<15} {}{}{}", name, section.role == CommRole::world ? "" : shape + ": ",
                             glance_gain(c), glance_best(c));
        else
          line += "; " + shape + ": " + glance_gain(c);
      }
    out += line + "\n";
  }
  for (const GlancePage& page : pages) out += fmt::format("{:<8} {}\n", page.label, printable(page.path));
  return out;
}

}  // namespace nccltune
