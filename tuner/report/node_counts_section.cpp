#include "report/node_counts_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "profile/node_count_rule.h"
#include "report/html_text.h"
#include "report/svg_chart.h"

namespace nccltune {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#2ca02c", "#d62728", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2"};

std::string file_of(int nodes) {
  return std::to_string(nodes) + "n.yaml";
}

// What a job of `nodes` nodes gets: which file(s), and the withheld settings.
struct JobGets {
  std::string profiles;
  std::string withheld;
};

JobGets job_gets(const std::map<int, Profile>& counts, int nodes) {
  if (counts.count(nodes)) return {file_of(nodes) + " (measured)", ""};
  if (nodes == 1)
    return {"none: NCCL's own choices (one node and several never stand in for each other)", ""};
  const Profile* below = nullptr;
  const Profile* above = nullptr;
  for (const auto& [count, profile] : counts) {
    if (count < 2) continue;
    if (count < nodes) below = &profile;
    if (count > nodes && !above) above = &profile;
  }
  if (!below && !above) return {"none", ""};
  const ServedProfile served = serve_unmeasured_count(
      nodes, below ? MeasuredCount{below, file_of(below->shape.nodes)} : MeasuredCount{},
      above ? MeasuredCount{above, file_of(above->shape.nodes)} : MeasuredCount{}, true);
  std::string files;
  for (const std::string& source : served.sources) files += (files.empty() ? "" : " and ") + source;
  std::string withheld;
  for (const std::string& line : served.withheld) withheld += (withheld.empty() ? "" : "; ") + line;
  return {files, withheld.empty() ? "nothing" : withheld};
}

std::string curves(const std::map<int, Profile>& counts, const std::string& op) {
  LineChart chart;
  chart.title = "busbw by node count (" + op + ")";
  chart.y_label = "busbw (GB/s, log scale)";
  chart.y_scale = YScale::log;
  std::size_t colour = 0;
  for (const auto& [count, profile] : counts) {
    const CollectiveProfile* c = profile.collective(op);
    if (!c || c->results.sizes.empty()) continue;
    ChartSeries series;
    series.id = "nodes-" + std::to_string(count);
    series.label = std::to_string(count) + " node(s), tuned";
    series.color = kPalette[colour++ % std::size(kPalette)];
    series.bytes = c->results.sizes;
    series.values =
        c->results.tuned.size() == c->results.sizes.size() ? c->results.tuned : c->results.baseline;
    chart.series.push_back(std::move(series));
  }
  return chart.series.empty() ? "" : render_line_chart(chart);
}

}  // namespace

std::string render_node_counts_section(const std::map<int, Profile>& counts, int this_count) {
  if (counts.empty()) return "";
  std::set<std::string> ops;
  for (const auto& [count, profile] : counts)
    for (const auto& [op, collective] : profile.collectives)
      if (!collective.guard) ops.insert(op);
  std::string out = "<section id=\"node-counts\"><h2>Every job size</h2>\n";
  out += fmt::format(
      "<p>Measured node counts of this node type: {}. A job of a measured count gets that profile; a job of "
      "another count gets the transport settings of the nearest, and the algorithm, protocol, channels and "
      "per-size choices only where the counts on both sides agree (none above the largest or below the "
      "smallest), so that NCCL's own choice stands where nothing was measured.</p>\n",
      html_text([&] {
        std::string list;
        for (const auto& [count, profile] : counts)
          list += (list.empty() ? "" : ", ") + std::to_string(count) +
                  (count == this_count ? " (this report)" : "");
        return list;
      }()));
  for (const std::string& op : ops) out += "<h3>" + html_text(op) + "</h3>\n" + curves(counts, op);
  out +=
      "<table class=\"node-counts\"><thead><tr><th>job of</th><th>gets</th><th>withheld (NCCL's own choice "
      "stands)</th></tr></thead><tbody>\n";
  const int largest = counts.rbegin()->first;
  // Counts strictly between two measured ones get the same: one row for each such run.
  for (int nodes = 1; nodes <= 2 * largest;) {
    const JobGets gets = job_gets(counts, nodes);
    int last = nodes;
    while (last + 1 <= 2 * largest && !counts.count(last + 1) && !counts.count(nodes) && nodes != 1) {
      const JobGets next = job_gets(counts, last + 1);
      if (next.profiles != gets.profiles || next.withheld != gets.withheld) break;
      ++last;
    }
    const std::string span = last == nodes ? std::to_string(nodes) : fmt::format("{}-{}", nodes, last);
    out += fmt::format("<tr><td>{} node(s)</td><td>{}</td><td>{}</td></tr>\n", span, html_text(gets.profiles),
                       html_text(gets.withheld));
    nodes = last + 1;
  }
  out += "</tbody></table></section>\n";
  return out;
}

}  // namespace nccltune
