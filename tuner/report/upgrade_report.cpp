#include "report/upgrade_report.h"

#include <fmt/format.h>

#include <cmath>

#include "base/byte_size.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/svg_chart.h"

namespace nccltune {
namespace {

// The page's own parts, after the base every page shares (html_page.h): the verdict's cards and
// the rows beyond the limit.
constexpr const char* kUpgradeStyle = R"(.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; margin: 20px 0; }
.card { background: #fff; border-radius: 10px; padding: 12px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
.card .label { color: #6b7280; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 24px; font-weight: 650; margin-top: 2px; }
.card .sub { color: #6b7280; font-size: 12px; }
tr.regression td { background: #fef2f2; }
)";

std::string upgrade_percent(double ratio) {
  return std::isfinite(ratio) ? fmt::format("{:+.1f}%", (ratio - 1) * 100) : std::string("n/a");
}

std::string upgrade_card(const std::string& label, const std::string& value, const std::string& sub,
                         const char* cls) {
  return fmt::format(
      "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value {}\">{}</div>"
      "<div class=\"sub\">{}</div></div>\n",
      html_text(label), cls, html_text(value), html_text(sub));
}

std::string op_section(const UpgradeComparison& c, const UpgradeOpSummary& op) {
  ChartSeries old_series, new_series;
  old_series.id = "old";
  old_series.label = "OLD " + c.old_nccl.version;
  old_series.color = "#6b7280";
  new_series.id = "new";
  new_series.label = "NEW " + c.new_nccl.version;
  new_series.color = "#2563eb";
  SpeedupBars bars;
  bars.title = op.op + ": NEW / OLD busbw per size";
  bars.y_label = "NEW / OLD busbw (linear)";  // the versions are in the title and the chart above
  bars.noise_floor = c.noise;
  std::string rows;
  for (const UpgradeRow& row : c.rows) {
    if (row.op != op.op) continue;
    old_series.bytes.push_back(row.bytes);
    old_series.values.push_back(row.old_busbw);
    new_series.bytes.push_back(row.bytes);
    new_series.values.push_back(row.new_busbw);
    bars.bytes.push_back(row.bytes);
    bars.ratios.push_back(row.ratio);
    const char* cls = row.verdict == UpgradeVerdict::regression    ? "bad"
                      : row.verdict == UpgradeVerdict::improvement ? "good"
                                                                   : "neutral";
    rows += fmt::format(
        "<tr{}><td class=\"num\">{}</td><td class=\"num\">{:.2f}</td><td class=\"num\">{:.2f}</td>"
        "<td class=\"num {}\">{:.3f}</td><td class=\"{}\">{}{}</td></tr>\n",
        row.beyond_limit ? " class=\"regression\"" : "", html_text(format_byte_size(row.bytes)), row.old_busbw,
        row.new_busbw, cls, row.ratio, cls, html_text(to_string(row.verdict)),
        row.beyond_limit ? html_text(fmt::format(", beyond {:g}%", c.max_regression_percent)) : "");
  }
  LineChart chart;
  chart.title = op.op + ": busbw of OLD and NEW";
  chart.y_label = "busbw (GB/s, log scale)";
  chart.y_scale = YScale::log;
  chart.series = {old_series, new_series};
  std::string out = fmt::format("<section id=\"op-{}\"><h2>{}</h2>\n", html_text(op.op), html_text(op.op));
  out += fmt::format("<p>Geometric mean NEW/OLD <strong>{:.3f}</strong> ({}); worst size {} at {:.3f} ({}).</p>\n",
                     op.geomean, html_text(upgrade_percent(op.geomean)), html_text(format_byte_size(op.worst_bytes)),
                     op.worst_ratio, html_text(upgrade_percent(op.worst_ratio)));
  out += render_line_chart(chart);
  out += render_speedup_bars(bars);
  out += "<table><tr><th class=\"num\">size</th><th class=\"num\">OLD busbw (GB/s)</th>"
         "<th class=\"num\">NEW busbw (GB/s)</th><th class=\"num\">NEW/OLD</th><th>verdict</th></tr>\n";
  return out + rows + "</table></section>\n";
}

}  // namespace

std::string render_upgrade_report_html(const UpgradeComparison& c, const std::string& source,
                                       const std::string& title, const std::string& generated_by) {
  std::string out =
      html_page_head("nccltune NCCL upgrade: " + c.old_nccl.version + " to " + c.new_nccl.version, kUpgradeStyle);
  out += "<header><h1>NCCL upgrade check: " + html_text(c.old_nccl.version) + " to " +
         html_text(c.new_nccl.version) + "</h1>\n";
  out += "<p class=\"key\">" + html_text(source) + "</p>\n";
  if (!title.empty()) out += "<div class=\"banner\">" + html_text(title) + "</div>\n";
  out += "</header>\n<div class=\"cards\">\n";
  int regressions = 0, improvements = 0;
  for (const UpgradeRow& row : c.rows) {
    regressions += row.beyond_limit ? 1 : 0;
    improvements += row.verdict == UpgradeVerdict::improvement ? 1 : 0;
  }
  out += upgrade_card("verdict", c.regressed() ? "regression" : "no regression",
                      fmt::format("beyond {:g}% and the noise", c.max_regression_percent),
                      c.regressed() ? "bad" : "good");
  out += upgrade_card("regressed sizes", std::to_string(regressions), "of " + std::to_string(c.rows.size()),
                      regressions ? "bad" : "neutral");
  out += upgrade_card("faster sizes", std::to_string(improvements), "beyond the noise", improvements ? "good" : "neutral");
  out += upgrade_card("rounds", std::to_string(c.rounds), fmt::format("noise {:.1f}%", c.noise * 100), "neutral");
  out += "</div>\n<section id=\"libraries\"><h2>Libraries</h2>\n<table>"
         "<tr><th></th><th>NCCL</th><th>library</th></tr>\n";
  out += "<tr><td>OLD</td><td>" + html_text(c.old_nccl.version) + "</td><td><code>" + html_text(c.old_nccl.library) +
         "</code></td></tr>\n";
  out += "<tr><td>NEW</td><td>" + html_text(c.new_nccl.version) + "</td><td><code>" + html_text(c.new_nccl.library) +
         "</code></td></tr>\n</table>\n";
  out += "<p class=\"note\">Interleaved rounds of fresh workers, OLD then NEW, on the same nodes and sizes. A size "
         "is a regression or an improvement when NEW/OLD lies beyond the noise; a regression also beyond "
         "--max-regression fails the check (exit 1).</p></section>\n";
  if (c.profile) {
    out += "<section id=\"profile\"><h2>Profile</h2>\n";
    out += "<p><code>" + html_text(c.profile->path) + "</code>" +
           (c.profile->nccl.empty() ? "" : " (tuned on NCCL " + html_text(c.profile->nccl) + ")") + ": " +
           html_text(upgrade_percent(c.profile->old_gain)) + " on OLD, " +
           html_text(upgrade_percent(c.profile->new_gain)) + " on NEW; it " +
           (c.profile->helps_on_new ? "still helps" : "does not help") + " on NEW.</p>\n";
    out += "<p><strong>" + html_text(c.profile->recommendation) + "</strong></p></section>\n";
  }
  for (const UpgradeOpSummary& op : c.ops) out += op_section(c, op);
  return out + html_page_foot(generated_by);
}

}  // namespace nccltune
