#include "report/observed_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "base/byte_size.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/svg_chart.h"

namespace nccltune {

namespace {

// One line per communicator in a collective's ratio chart, the largest time shares first: more
// would be a legend nobody reads (every row stays in the verdicts table).
constexpr std::size_t kMaxRatioLines = 8;
constexpr std::array<const char*, kMaxRatioLines> kLineColors = {"#2563eb", "#16a34a", "#9333ea", "#ea580c",
                                                                 "#0891b2", "#db2777", "#65a30d", "#92400e"};
constexpr const char* kMeasuredColor = "#2563eb";
constexpr const char* kUnmeasuredShareColor = "#9ca3af";

// The rules of the page of its own; in a profile's report the report's own style has them.
constexpr const char* kObservedStyle = R"(tr.unmeasured td { color: #6b7280; font-style: italic; }
.warn { color: #92400e; background: #fffbeb; border-left: 3px solid #f59e0b; padding: 6px 10px; margin: 10px 0 0; }
)";

std::string share_percent(double share) {
  return fmt::format("{:.1f}%", 100 * share);
}

std::string number_or_dash(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("-");
}

// [min, max + 1) in powers of two, as observe's text output shows a bucket.
std::string bucket_words(const ObservationRow& row) {
  const bool open = row.max_bytes == ~std::uint64_t(0);
  return "[" + format_byte_size(row.min_bytes) + ", " +
         (open ? std::string("inf") : format_byte_size(row.max_bytes + 1)) + ")";
}

std::string communicator_words(const ObservationCommunicator& c) {
  return (c.name.empty() ? c.id : c.name) + " (" + c.shape + ", " + std::to_string(c.n_ranks) + " ranks)";
}

double communicator_share(const ObservationCommunicator& c) {
  double share = 0;
  for (const ObservationRow& row : c.rows) share += row.time_share;
  return share;
}

const char* verdict_class(std::string_view verdict) {
  if (verdict == "as_tuned") return "good";
  if (verdict == "below_tuned" || verdict == "not_served") return "bad";
  return "neutral";
}

std::string verdict_words(const ObservationRow& row) {
  if (row.verdict == "as_tuned") return "as tuned";
  if (row.verdict == "below_tuned")
    return row.ratio ? fmt::format("below tuned ({:.2f})", *row.ratio) : std::string("below tuned");
  if (row.verdict == "not_served") return "not served";
  return "unmeasured";
}

std::string context_line(const Observation& o) {
  std::string line = fmt::format("{} record{} of {} rank{} on {} host{}, {} communicator{}", o.records,
                                 o.records == 1 ? "" : "s", o.ranks, o.ranks == 1 ? "" : "s", o.hosts.size(),
                                 o.hosts.size() == 1 ? "" : "s", o.communicators.size(),
                                 o.communicators.size() == 1 ? "" : "s");
  if (!o.inspector_versions.empty()) {
    line += "; Inspector ";
    for (std::size_t i = 0; i < o.inspector_versions.size(); ++i)
      line += (i ? ", " : "") + o.inspector_versions[i];
  }
  return line + "; profile: " + (o.profile ? *o.profile : std::string("none"));
}

// One horizontal bar per shape, the measured part then the unmeasured part, labelled.
std::string shape_bars(const std::array<ShapeTimeShare, 4>& shares) {
  constexpr int kWidth = 1180, kLabel = 70, kBarsWidth = 640, kRow = 30, kBar = 18;
  const int height = kRow * static_cast<int>(shares.size()) + 10;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart shape-shares\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" font-size=\"12\" font-family=\"system-ui, sans-serif\">\n"
      "<title>Share of the job's collective time per communicator shape</title>\n",
      kWidth, height);
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const ShapeTimeShare& s = shares[i];
    const int y = 6 + kRow * static_cast<int>(i);
    // Shares of one whole; a file whose shares add up to more is drawn within the bar.
    const double unmeasured = std::clamp(s.unmeasured, 0.0, 1.0);
    const double measured = std::clamp(s.share - s.unmeasured, 0.0, 1.0 - unmeasured);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#374151\">{}</text>\n", kLabel - 8,
                       y + 13, s.shape);
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f4f6\"/>\n", kLabel, y,
                       kBarsWidth, kBar);
    if (measured > 0)
      out += fmt::format(
          "<rect class=\"share measured\" data-shape=\"{}\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
          "fill=\"{}\"/>\n",
          s.shape, kLabel, y, measured * kBarsWidth, kBar, kMeasuredColor);
    if (unmeasured > 0)
      out += fmt::format(
          "<rect class=\"share unmeasured\" data-shape=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
          "height=\"{}\" fill=\"{}\"><title>no profile section measures these communicators</title></rect>\n",
          s.shape, kLabel + measured * kBarsWidth, y, unmeasured * kBarsWidth, kBar, kUnmeasuredShareColor);
    std::string label = s.communicators == 0
                            ? std::string("no communicator")
                            : fmt::format("{} of the time, {} communicator{}", share_percent(s.share),
                                          s.communicators, s.communicators == 1 ? "" : "s");
    if (s.unmeasured > 0) label += fmt::format(", {} unmeasured", share_percent(s.unmeasured));
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#111827\">{}</text>\n", kLabel + kBarsWidth + 10,
                       y + 13, label);
  }
  return out + "</svg>\n";
}

std::string shares_part(const Observation& o) {
  const std::array<ShapeTimeShare, 4> shares = shape_time_shares(o);
  std::string out = "<h3>Time per communicator shape</h3>\n" + shape_bars(shares);
  std::vector<std::string> unmeasured;
  for (const ShapeTimeShare& s : shares)
    if (s.unmeasured > 0) unmeasured.emplace_back(s.shape);
  if (!unmeasured.empty()) {
    std::string names;
    for (std::size_t i = 0; i < unmeasured.size(); ++i) names += (i ? ", " : "") + unmeasured[i];
    out += "<p class=\"warn\">Unmeasured (grey): the profile has no section for " + html_text(names) +
           " communicators; the verdicts table names the <code>nccltune tune</code> line that measures "
           "one.</p>\n";
  }
  return out;
}

// Per collective, the ratio per size bucket of each communicator with one.
std::string ratio_charts(const Observation& o) {
  std::vector<std::string> collectives;
  for (const ObservationCommunicator& c : o.communicators)
    for (const ObservationRow& row : c.rows)
      if (std::find(collectives.begin(), collectives.end(), row.collective) == collectives.end())
        collectives.push_back(row.collective);
  std::vector<const ObservationCommunicator*> by_share;
  for (const ObservationCommunicator& c : o.communicators) by_share.push_back(&c);
  std::stable_sort(by_share.begin(), by_share.end(), [](const auto* a, const auto* b) {
    return communicator_share(*a) > communicator_share(*b);
  });
  std::string out;
  for (const std::string& collective : collectives) {
    LineChart chart;
    chart.title = collective + ": observed / tuned busbw per size";
    chart.y_label = "observed / tuned busbw (linear)";
    chart.plot_height = 240;
    // The reference lines span every bucket drawn, edge to edge; a bucket's point sits at its
    // geometric middle, so one bucket alone still shows where it lies against them.
    std::set<std::uint64_t> edges;
    std::size_t left_out = 0;
    for (const ObservationCommunicator* c : by_share) {
      ChartSeries line;
      for (const ObservationRow& row : c->rows)
        if (row.collective == collective && row.ratio) {
          const std::uint64_t low = std::max<std::uint64_t>(row.min_bytes, 1);
          const std::uint64_t high =
              std::max(low, row.max_bytes == ~std::uint64_t(0) ? row.max_bytes : row.max_bytes + 1);
          line.bytes.push_back(
              static_cast<std::uint64_t>(std::sqrt(static_cast<double>(low) * static_cast<double>(high))));
          line.values.push_back(*row.ratio);
          if (chart.series.size() < kMaxRatioLines) edges.insert({low, high});
        }
      if (line.bytes.empty()) continue;
      if (chart.series.size() == kMaxRatioLines) {
        ++left_out;
        continue;
      }
      line.id = fmt::format("communicator-{}", chart.series.size() + 1);
      line.label = communicator_words(*c);
      line.color = kLineColors[chart.series.size()];
      chart.series.push_back(std::move(line));
    }
    out += "<h3>" + html_text(collective) + ": observed / tuned per size</h3>\n";
    if (chart.series.empty()) {
      out += "<p class=\"note\">No row of " + html_text(collective) +
             " has a tuned busbw to hold it against (unmeasured shape or size).</p>\n";
      continue;
    }
    ChartSeries tuned{"as-tuned", "as tuned (1.0)", "#374151", true, {edges.begin(), edges.end()}, {}};
    tuned.values.assign(tuned.bytes.size(), 1.0);
    ChartSeries floor{"tolerance", fmt::format("tolerance ({:.2f}: below it, below tuned)", 1 - o.tolerance),
                      "#9ca3af",   true,
                      tuned.bytes, std::vector<double>(tuned.bytes.size(), 1 - o.tolerance)};
    chart.series.push_back(std::move(tuned));
    chart.series.push_back(std::move(floor));
    chart.bands.push_back({"as-tuned", "tolerance"});
    out += render_line_chart(chart);
    if (left_out > 0)
      out += fmt::format("<p class=\"note\">{} more communicator{} of {} in the table below.</p>\n", left_out,
                         left_out == 1 ? "" : "s", html_text(collective));
  }
  return out;
}

std::string verdicts_table(const Observation& o) {
  std::map<std::string, int> counts;
  for (const ObservationCommunicator& c : o.communicators)
    for (const ObservationRow& row : c.rows) ++counts[row.verdict];
  std::string out = "<h3>Verdicts</h3>\n<p>";
  bool first = true;
  for (const char* verdict : {"as_tuned", "below_tuned", "not_served", "unmeasured"}) {
    out += fmt::format("{}<span class=\"{}\">{} {}</span>", first ? "" : " &middot; ", verdict_class(verdict),
                       counts[verdict], verdict);
    first = false;
  }
  out +=
      "</p>\n<table class=\"verdicts\"><tr><th>communicator</th><th>profile section</th><th>collective</th>"
      "<th>size</th><th class=\"num\">ops</th><th class=\"num\">time</th><th class=\"num\">busbw p50</th>"
      "<th class=\"num\">p10</th><th class=\"num\">tuned</th><th class=\"num\">ratio</th><th>ran</th>"
      "<th>tuned algo</th><th>verdict</th></tr>\n";
  for (const ObservationCommunicator& c : o.communicators)
    for (const ObservationRow& row : c.rows) {
      out += fmt::format(
          "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td>"
          "<td>{}</td><td>{}</td><td class=\"{}\">{}",
          row.verdict == "unmeasured" ? " class=\"unmeasured\"" : "", html_text(communicator_words(c)),
          html_text(c.section.value_or("none")), html_text(row.collective), html_text(bucket_words(row)),
          row.ops, share_percent(row.time_share), number_or_dash(row.busbw_median, "{:.2f}"),
          number_or_dash(row.busbw_p10, "{:.2f}"), number_or_dash(row.tuned_busbw, "{:.2f}"),
          number_or_dash(row.ratio, "{:.2f}"), html_text(row.ran.value_or("-")),
          html_text(row.tuned.value_or("-")), verdict_class(row.verdict), html_text(verdict_words(row)));
      if (!row.tune.empty()) out += "<br><code>" + html_text(row.tune) + "</code>";
      out += "</td></tr>\n";
    }
  out += "</table>\n<p class=\"note\">Busbw in GB/s. A row is as tuned when its median busbw is at least " +
         fmt::format("{:.2f}", 1 - o.tolerance) + " of the profile's at that size" +
         (o.tolerance_given ? "" : " (observe's default tolerance)") +
         "; not served when NCCL ran another algorithm than the profile chose; unmeasured when the profile "
         "has no value for its shape or size.</p>\n";
  return out;
}

std::string stragglers_part(const Observation& o) {
  std::string out = "<h3>Stragglers</h3>\n";
  if (o.stragglers.empty())
    return out +
           "<p class=\"good\">None: no rank arrived last in most of its collectives.</p>\n";
  out +=
      "<table class=\"stragglers\"><tr><th "
      "class=\"num\">rank</th><th>host</th><th>GPU</th><th>communicator</th>"
      "<th class=\"num\">last in</th><th class=\"num\">lead per collective</th>"
      "<th class=\"num\">the others waited</th></tr>\n";
  for (const ObservationStraggler& s : o.stragglers) {
    std::uint64_t matched = 0;
    std::string communicator = s.communicator_name.empty() ? s.communicator : s.communicator_name;
    for (const ObservationCommunicator& c : o.communicators)
      if (c.id == s.communicator) {
        matched = c.matched;
        if (s.communicator_name.empty()) communicator = communicator_words(c);
      }
    const double lead = straggler_lead_us(s, matched);
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num bad\">{:.0f} us</td></tr>\n",
        s.rank, html_text(s.host.empty() ? "?" : s.host), html_text(s.gpu.value_or("?")),
        html_text(communicator), share_percent(s.last_share),
        lead > 0 ? fmt::format("{:.0f} us", lead) : std::string("-"), s.cost_us);
  }
  return out +
         "</table>\n<p class=\"note\">The rank with the shortest execution time of a collective arrived "
         "last: the others waited for it. A straggler is a process last in most of the collectives it took "
         "part in; its lead is what the others waited, summed over those it was last in, and per "
         "collective; the communicator is where it cost them most.</p>\n";
}

std::string suspects_part(const Observation& o) {
  std::string out = "<h3>Suspect hosts</h3>\n";
  if (o.suspects.empty()) return out + "<p class=\"good\">None.</p>\n";
  out += "<table class=\"suspects\"><tr><th>host</th><th>why</th></tr>\n";
  for (const ObservationSuspect& s : o.suspects)
    out += "<tr><td class=\"bad\">" + html_text(s.host) + "</td><td>" + html_text(s.why) + "</td></tr>\n";
  return out + "</table>\n";
}

}  // namespace

std::array<ShapeTimeShare, 4> shape_time_shares(const Observation& o) {
  std::array<ShapeTimeShare, 4> shares{{{"world"}, {"rail"}, {"node"}, {"other"}}};
  for (const ObservationCommunicator& c : o.communicators)
    for (ShapeTimeShare& s : shares)
      if (s.shape == c.shape) {
        const double share = communicator_share(c);
        s.share += share;
        if (!c.section) s.unmeasured += share;
        ++s.communicators;
      }
  return shares;
}

double straggler_lead_us(const ObservationStraggler& straggler, std::uint64_t matched) {
  const double last = straggler.last ? *straggler.last : straggler.last_share * static_cast<double>(matched);
  return last >= 1 ? straggler.cost_us / last : 0;
}

std::string render_observed_section(const Observation& o, std::string_view source) {
  std::string out = "<section id=\"observed\"><h2>Observed</h2>\n";
  out += "<p>" + html_text(context_line(o)) + "</p>\n";
  out += "<p class=\"note\">From <code>" + html_text(source) +
         "</code> (<code>nccltune observe --format json</code>): NCCL Inspector's records of a job, held "
         "against the profile per communicator shape.</p>\n";
  out += shares_part(o);
  out += ratio_charts(o);
  out += verdicts_table(o);
  out += stragglers_part(o);
  out += suspects_part(o);
  return out + "</section>\n";
}

std::string render_observed_report_html(const Observation& o, const std::string& source,
                                        const std::string& title, const std::string& generated_by) {
  std::string out = html_page_head("nccltune observed job: " + source, kObservedStyle);
  out += "<header><h1>NCCL observed job</h1>\n";
  out += "<p class=\"key\">observed " + html_text(source) + "</p>\n";
  out +=
      "<p class=\"glance\">The observed job alone: no profile given to the report (<code>nccltune report "
      "PROFILE --observed FILE</code> adds the profile's own sections).</p>\n";
  if (!title.empty()) out += "<div class=\"banner\">" + html_text(title) + "</div>\n";
  out += "</header>\n";
  out += render_observed_section(o, source);
  return out + html_page_foot(generated_by);
}

}  // namespace nccltune
