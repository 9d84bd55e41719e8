#include "report/fleet_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "base/byte_size.h"
#include "report/html_text.h"
#include "report/profile_text.h"

namespace nccltune {

namespace {

// Above this many nodes the unmeasured pairs are only the grey triangle under the measured cells
// (one element each would be half a million at 1000 nodes), and the names are left to the table.
constexpr std::size_t kMaxDrawnNodes = 64;

constexpr const char* kUnmeasuredColor = "#e5e7eb";
constexpr const char* kFailedColor = "#6b7280";
constexpr const char* kSuspectColor = "#b91c1c";
constexpr const char* kLinkColor = "#111827";

struct Rgb {
  double r, g, b;
};
constexpr Rgb kSlow{220, 38, 38}, kOutlier{245, 158, 11}, kFine{22, 163, 74};  // red, amber, green

Rgb mix(Rgb a, Rgb b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

// Red at half the median or below, amber at the outlier threshold, green at the median or above:
// what is slow stands out however close to the threshold it is.
Rgb heat_rgb(double percent, double outlier) {
  const double middle = std::clamp(100 * outlier, 51.0, 99.0);
  const double p = std::clamp(percent, 50.0, 100.0);
  return p <= middle ? mix(kSlow, kOutlier, (p - 50) / (middle - 50))
                     : mix(kOutlier, kFine, (p - middle) / (100 - middle));
}

std::string heat_color(double percent, double outlier) {
  const Rgb c = heat_rgb(percent, outlier);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r)),
                     static_cast<int>(std::lround(c.g)), static_cast<int>(std::lround(c.b)));
}

// The colour a cell's number is written in: dark on the light amber, white on red and green.
const char* number_color(double percent, double outlier) {
  const Rgb c = heat_rgb(percent, outlier);
  return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b > 140 ? "#111827" : "#ffffff";
}

bool usable(const std::optional<double>& gbps) {
  return gbps && std::isfinite(*gbps) && *gbps > 0;
}

// Every node the survey names, in the local stage's order (node index order), then any other.
std::vector<std::string> node_order(const FleetSurvey& s) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  auto add = [&](const std::string& node) {
    if (seen.insert(node).second) order.push_back(node);
  };
  for (const LocalResult& l : s.local) add(l.node);
  for (const PairResult& p : s.pairs)
    for (const std::string& node : p.nodes) add(node);
  for (const SuspectNode& n : s.suspects) add(n.node);
  for (const SuspectLink& l : s.links)
    for (const std::string& node : l.nodes) add(node);
  for (const FailedNode& f : s.failed) add(f.node);
  return order;
}

std::string percent_text(double gbps, const std::optional<double>& median_gbps) {
  if (!median_gbps) return "";
  return fmt::format(", {:.0f}% of the median {} GB/s", 100 * gbps / *median_gbps,
                     format_busbw(*median_gbps));
}

class HeatMap {
 public:
  explicit HeatMap(const FleetSurvey& s) : survey_(s), nodes_(node_order(s)) {
    for (const PairResult& p : s.pairs) {
      if (p.nodes[0] == p.nodes[1]) continue;
      pairs_[key(p.nodes)] = &p;  // each pair runs once (round-robin); a repeat shows the last
    }
    for (const LocalResult& l : s.local) local_[l.node] = &l;
    // The survey's own references, so that the colours say what its verdicts say.
    if (usable(s.pair_median_gbps)) pair_median_ = s.pair_median_gbps;
    if (usable(s.nvlink_median_gbps)) nvlink_median_ = s.nvlink_median_gbps;  // a rack's NVLink pairs'
    if (usable(s.local_median_gbps)) local_median_ = s.local_median_gbps;
    for (const SuspectNode& n : s.suspects) suspects_.insert(n.node);
    for (const FailedNode& f : s.failed) failed_.insert(f.node);
    const std::size_t n = std::max<std::size_t>(nodes_.size(), 1);
    cell_ = std::clamp(static_cast<int>(800 / n), 4, 32);
    labelled_ = nodes_.size() <= kMaxDrawnNodes;
    std::size_t longest = 0;
    if (labelled_)
      for (const std::string& node : nodes_) longest = std::max(longest, shorten(node, kLabelPoints).size());
    // Room for a suspect's bold name and its " ▲" mark.
    label_width_ = labelled_ ? static_cast<int>(std::min<std::size_t>(longest, kLabelPoints) + 2) * 8 + 16 : 8;
  }

  std::string render() const {
    const int n = static_cast<int>(nodes_.size());
    const int grid = n * cell_;
    const int top = 8, legend_top = top + grid + 24;
    const int width = std::max(2 * label_width_ + grid + 16, 760);
    const int height = legend_top + 64;
    std::string out = fmt::format(
        "<svg class=\"fleet-heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
        "viewBox=\"0 0 {} {}\" role=\"img\" font-size=\"12\">\n"
        "<title>busbw of every node pair as a share of the pairs' median; the diagonal: each node alone"
        "</title>\n",
        width, height, width, height);
    const int left = label_width_;
    // The lower triangle, grey: what no cell covers was not measured.
    out += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"/>\n", left, top, left, top + grid,
                       left + grid, top + grid, kUnmeasuredColor);
    std::string outlines;
    for (int i = 0; i < n; ++i) {
      out += local_cell(i, left, top, outlines);
      for (int j = 0; j < i; ++j) out += pair_cell(i, j, left, top, outlines);
    }
    out += outlines;  // over every cell, so no neighbour covers an outline
    if (labelled_)
      for (int i = 0; i < n; ++i) out += labels(i, left, top);
    out += legend(left, legend_top);
    return out + "</svg>\n";
  }

  const std::optional<double>& pair_median() const { return pair_median_; }
  bool numbered() const { return cell_ >= kNumberedCell; }  // each measured cell holds its percent

 private:
  static constexpr std::size_t kLabelPoints = 20;
  static constexpr int kNumberedCell = 20;  // px: "100" in bold 9 px fits (800 / 40 nodes)

  static std::pair<std::string, std::string> key(const std::array<std::string, 2>& nodes) {
    return std::minmax(nodes[0], nodes[1]);
  }

  std::string rect(int row, int column, int left, int top, const std::string& fill,
                   const std::string& attributes, const std::string& tooltip) const {
    return fmt::format(
        "<rect {} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" "
        "stroke-width=\"{}\"><title>{}</title></rect>\n",
        attributes, left + column * cell_, top + row * cell_, cell_, cell_, fill, cell_ >= 10 ? 1 : 0,
        html_text(tooltip));
  }

  // The cell's share of the median, written in it ("97"), so that a screenshot shows the numbers
  // the tooltip gives; cells too small to hold three digits legibly (over 40 nodes) have none.
  std::string number(int row, int column, int left, int top, double percent) const {
    if (cell_ < kNumberedCell) return "";
    const double size = std::min(12.0, std::max(9.0, cell_ * 0.42));
    return fmt::format(
        "<text class=\"cell-number\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"{:.0f}\" "
        "font-weight=\"600\" fill=\"{}\" pointer-events=\"none\">{:.0f}</text>\n",
        left + column * cell_ + cell_ / 2, top + row * cell_ + cell_ / 2.0 + size * 0.36, size,
        number_color(percent, survey_.thresholds.outlier), percent);
  }

  std::string cross(int row, int column, int left, int top) const {
    const int x = left + column * cell_, y = top + row * cell_, inset = std::max(1, cell_ / 5);
    return fmt::format(
        "<path class=\"failed-cross\" d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#ffffff\" "
        "stroke-width=\"{}\"/>\n",
        x + inset, y + inset, x + cell_ - inset, y + cell_ - inset, x + cell_ - inset, y + inset, x + inset,
        y + cell_ - inset, cell_ >= 10 ? 2 : 1);
  }

  std::string outline(int row, int column, int left, int top, const char* cls, const char* color) const {
    return fmt::format(
        "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"{}\"/>\n",
        cls, left + column * cell_ + 1, top + row * cell_ + 1, cell_ - 2, cell_ - 2, color,
        cell_ >= 10 ? 3 : 1);
  }

  std::string local_cell(int i, int left, int top, std::string& outlines) const {
    const std::string& node = nodes_[static_cast<std::size_t>(i)];
    const auto found = local_.find(node);
    const LocalResult* l = found == local_.end() ? nullptr : found->second;
    const std::string attributes = "class=\"local\" data-node=\"" + html_text(node) + "\"";
    std::string out;
    if (failed_.count(node) || (l && l->verdict == "failed")) {
      out = rect(i, i, left, top, kFailedColor, attributes, node + " alone: failed") + cross(i, i, left, top);
    } else if (l && usable(l->busbw_gbps)) {
      const double percent = local_median_ ? 100 * *l->busbw_gbps / *local_median_ : 100;
      out = rect(i, i, left, top, heat_color(percent, survey_.thresholds.outlier), attributes,
                 node + " alone: " + format_busbw(*l->busbw_gbps) + " GB/s" +
                     percent_text(*l->busbw_gbps, local_median_) + " of the nodes alone");
      if (local_median_) out += number(i, i, left, top, percent);
    } else {
      out = rect(i, i, left, top, kUnmeasuredColor, attributes, node + " alone: not measured");
    }
    if (suspects_.count(node)) outlines += outline(i, i, left, top, "suspect-node", kSuspectColor);
    return out;
  }

  std::string pair_cell(int i, int j, int left, int top, std::string& outlines) const {
    const std::string& a = nodes_[static_cast<std::size_t>(j)];
    const std::string& b = nodes_[static_cast<std::size_t>(i)];
    const std::pair<std::string, std::string> names = std::minmax(a, b);
    const auto found = pairs_.find(names);
    const PairResult* p = found == pairs_.end() ? nullptr : found->second;
    const std::string attributes = "class=\"pair\" data-nodes=\"" + html_text(a + " " + b) + "\"";
    const std::string pair = a + " and " + b;
    std::string out;
    if (p && usable(p->busbw_gbps)) {
      // An NVLink pair against the NVLink pairs, as the survey held it.
      const std::optional<double>& median = p->path == "nvlink" ? nvlink_median_ : pair_median_;
      const double percent = median ? 100 * *p->busbw_gbps / *median : 100;
      out = rect(i, j, left, top, heat_color(percent, survey_.thresholds.outlier), attributes,
                 fmt::format("{} (round {}{}): {} GB/s{}", pair, p->round, p->path == "nvlink" ? ", NVLink" : "",
                             format_busbw(*p->busbw_gbps), percent_text(*p->busbw_gbps, median)));
      if (median) out += number(i, j, left, top, percent);
    } else if (p && p->verdict == "failed") {
      out = rect(i, j, left, top, kFailedColor, attributes,
                 fmt::format("{} (round {}): failed", pair, p->round)) +
            cross(i, j, left, top);
    } else if (labelled_) {  // else the grey triangle shows it
      out = rect(i, j, left, top, kUnmeasuredColor, attributes, pair + ": not measured");
    }
    for (const SuspectLink& link : survey_.links)
      if (key(link.nodes) == names) outlines += outline(i, j, left, top, "suspect-link", kLinkColor);
    return out;
  }

  // The node's name left of its row and right of its diagonal cell (the top of its column).
  std::string labels(int i, int left, int top) const {
    const std::string& node = nodes_[static_cast<std::size_t>(i)];
    const bool suspect = suspects_.count(node) > 0, failed = failed_.count(node) > 0;
    const std::string shown = html_text(shorten(node, kLabelPoints));
    const std::string style = suspect ? fmt::format(" fill=\"{}\" font-weight=\"700\"", kSuspectColor)
                              : failed
                                  ? fmt::format(" fill=\"{}\" text-decoration=\"line-through\"", kFailedColor)
                                  : std::string(" fill=\"#111827\"");
    const std::string marker = suspect ? " \u25b2" : failed ? " \u2715" : "";
    const std::string cls = suspect ? "node-label suspect" : failed ? "node-label failed" : "node-label";
    const int y = top + i * cell_ + cell_ / 2 + 4;
    return fmt::format(
        "<text class=\"{}\" x=\"{}\" y=\"{}\" text-anchor=\"end\"{}>{}{}</text>\n"
        "<text class=\"{}\" x=\"{}\" y=\"{}\"{}>{}{}</text>\n",
        cls, left - 6, y, style, shown, marker, cls, left + (i + 1) * cell_ + 6, y, style, shown, marker);
  }

  std::string legend(int left, int top) const {
    std::string out = "<g class=\"legend\">\n";
    const double outlier = survey_.thresholds.outlier;
    int x = left;
    for (const double percent : {50.0, 60.0, 70.0, 100 * outlier, 92.0, 100.0}) {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"36\" height=\"14\" fill=\"{}\"/>\n", x, top,
                         heat_color(percent, outlier));
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#4b5563\">{}{:.0f}%</text>\n",
                         x + 18, top + 28,
                         percent <= 50    ? "\u2264"
                         : percent >= 100 ? "\u2265"
                                          : "",
                         percent);
      x += 40;
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#4b5563\">of the median{}</text>\n", left, top + 46,
                       cell_ >= kNumberedCell ? " (the number in each cell)" : "");
    x += 16;
    auto swatch = [&](const std::string& shape, const std::string& text) {
      out +=
          shape + fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#111827\">{}</text>\n", x + 20, top + 11, text);
      x += 20 + static_cast<int>(text.size()) * 7 + 14;
    };
    swatch(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n", x, top,
                       kUnmeasuredColor),
           "not measured");
    swatch(
        fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
                    "<path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#ffffff\" stroke-width=\"2\"/>\n",
                    x, top, kFailedColor, x + 3, top + 3, x + 11, top + 11, x + 11, top + 3, x + 3, top + 11),
        "failed");
    swatch(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{}\" "
                       "stroke-width=\"3\"/>\n",
                       x + 1, top + 1, kSuspectColor),
           "suspect node");
    swatch(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{}\" "
                       "stroke-width=\"3\"/>\n",
                       x + 1, top + 1, kLinkColor),
           "suspect link");
    return out + "</g>\n";
  }

  const FleetSurvey& survey_;
  std::vector<std::string> nodes_;
  std::map<std::pair<std::string, std::string>, const PairResult*> pairs_;
  std::map<std::string, const LocalResult*> local_;
  std::set<std::string> suspects_, failed_;
  std::optional<double> pair_median_, nvlink_median_, local_median_;
  int cell_ = 32;
  bool labelled_ = true;
  int label_width_ = 8;
};

std::string tables(const FleetSurvey& s) {
  std::string out = "<h3>Suspect nodes</h3>\n";
  if (s.suspects.empty()) {
    out += "<p>None.</p>\n";
  } else {
    out +=
        "<table class=\"fleet-suspects\"><tr><th>node</th><th>path</th><th class=\"num\">busbw GB/s</th>"
        "<th class=\"num\">median GB/s</th><th>evidence</th></tr>\n";
    for (const SuspectNode& n : s.suspects)
      out += fmt::format(
          "<tr><td class=\"mono bad\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td>{}</td></tr>\n",
          html_text(n.node), html_text(n.path), format_busbw(n.busbw_gbps), format_busbw(n.median_gbps),
          html_text(n.evidence));
    out += "</table>\n";
  }
  out += "<h3>Suspect links</h3>\n";
  if (s.links.empty()) {
    out += "<p>None.</p>\n";
  } else {
    out +=
        "<table class=\"fleet-links\"><tr><th>nodes</th><th class=\"num\">busbw GB/s</th><th>evidence</th>"
        "</tr>\n";
    for (const SuspectLink& l : s.links)
      out += fmt::format(
          "<tr><td class=\"mono\">{} &ndash; {}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
          html_text(l.nodes[0]), html_text(l.nodes[1]), format_busbw(l.busbw_gbps), html_text(l.evidence));
    out += "</table>\n";
  }
  out += "<h3>Failed nodes</h3>\n";
  if (s.failed.empty()) return out + "<p>None.</p>\n";
  out += "<table class=\"fleet-failed\"><tr><th>node</th><th>what</th><th>stage</th><th>reason</th></tr>\n";
  for (const FailedNode& f : s.failed)
    out += fmt::format(
        "<tr><td class=\"mono\">{}</td><td class=\"outcome\">{}</td><td>{}</td><td>{}</td></tr>\n",
        html_text(f.node), html_text(f.what), html_text(f.stage), html_text(f.reason));
  return out + "</table>\n";
}

}  // namespace

std::string describe_fleet(const FleetSurvey& survey) {
  const auto count = [](std::size_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  return fmt::format(
      "{} node{} x {} GPU \u00b7 {} at {} \u00b7 {} alone, {} in {} round{} \u00b7 {}, {}, {} failed",
      survey.nodes, survey.nodes == 1 ? "" : "s", survey.gpus_per_node, survey.collective,
      format_byte_size(survey.bytes), count(survey.local.size(), "node"), count(survey.pairs.size(), "pair"),
      survey.rounds, survey.rounds == 1 ? "" : "s", count(survey.suspects.size(), "suspect node"),
      count(survey.links.size(), "suspect link"), survey.failed.size());
}

std::string render_fleet_section(const FleetSurvey& s, std::string_view source, bool with_description) {
  const HeatMap map(s);
  std::string out = "<section id=\"fleet\"><h2>Fleet survey</h2>\n";
  if (with_description) out += "<p><strong>" + html_text(describe_fleet(s)) + "</strong></p>\n";
  // Suspect nodes are slow alone or with every partner; suspect links, pairs slow only together.
  out += fmt::format("<p class=\"note\">Pairs' median {}, noise between repeats {:.1f}%.</p>\n",
                     map.pair_median() ? format_busbw(*map.pair_median()) + " GB/s" : "not measured",
                     s.noise_pct);
  if (!s.verdicts.empty()) {
    out += "<dl>\n";
    for (const FleetVerdict& v : s.verdicts)
      out += fmt::format("<dt class=\"{}\">{} {}</dt><dd>{}</dd>\n", v.level == "pass" ? "" : "flag",
                         html_text(v.level), html_text(v.check), html_text(v.message));
    out += "</dl>\n";
  }
  out += map.render();
  out += fmt::format(
      "<p class=\"note\">Below the diagonal, each pair's busbw at {} as a share of the pairs' median "
      "(the median over nodes of each node's median pair); on it, each node alone against the median of "
      "the nodes alone. {}Survey read from <code>{}</code>.</p>\n",
      format_byte_size(s.bytes),
      map.numbered() ? "Each cell holds that share in percent; hover it for the busbw and the round. "
                     : "Hover a cell for its numbers (too many nodes to write them in the cells). ",
      html_text(source));
  return out + tables(s) + "</section>\n";
}

}  // namespace nccltune
