#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/byte_size.h"
#include "report/html_text.h"

namespace nccltune {

namespace {

constexpr int kLeft = 72, kRight = 24, kTop = 14, kAxisBelow = 46, kLegendRow = 20;
constexpr const char* kAxisColor = "#6b7280";
constexpr const char* kGridColor = "#e5e7eb";
constexpr const char* kMinorGridColor = "#f3f4f6";
constexpr const char* kFont = "font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\"";

// The smallest 1, 2 or 5 x 10^k that is at least `rough`.
double nice_step(double rough) {
  if (!(rough > 0) || !std::isfinite(rough)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (factor * magnitude >= rough * (1 - 1e-9)) return factor * magnitude;
  return 10 * magnitude;
}

// Tick labels without trailing zeros: 0, 50, 2.5, 0.01.
std::string tick_label(double value) {
  if (std::abs(value) < 1e-12) return "0";
  return fmt::format("{:g}", value);
}

std::string svg_open(int width, int height, const std::string& title, const std::string& kind) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart {}\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" {} font-size=\"12\">\n<title>{}</title>\n",
      kind, width, height, width, height, kFont, html_text(title));
}

// Log2 x positions of the sizes the chart shows, and the labelled powers of two between them.
struct LogAxis {
  double lo = 0, hi = 1;  // log2 bytes at the plot's left and right edges
  double x0 = 0, width = 1;

  double at(std::uint64_t bytes) const {
    return x0 + (std::log2(static_cast<double>(bytes)) - lo) / (hi - lo) * width;
  }
};

LogAxis log_axis(const std::vector<ChartSeries>& series, double x0, double width) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const ChartSeries& s : series)
    for (std::uint64_t bytes : s.bytes)
      if (bytes > 0) {
        lo = std::min(lo, std::log2(static_cast<double>(bytes)));
        hi = std::max(hi, std::log2(static_cast<double>(bytes)));
      }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1) hi = lo + 1;
  return {std::floor(lo), std::ceil(hi), x0, width};
}

std::string x_ticks(const LogAxis& axis, double y_bottom, double y_top) {
  std::string out;
  const int first = static_cast<int>(axis.lo), last = static_cast<int>(axis.hi);
  const int every = std::max(1, (last - first + 11) / 12);  // at most about 12 labels
  for (int exponent = first; exponent <= last; exponent += every) {
    if (exponent < 0 || exponent > 62) continue;
    const std::uint64_t bytes = std::uint64_t{1} << exponent;
    const double x = axis.at(bytes);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n",
                       x, y_top, y_bottom, kGridColor);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n", x,
                       y_bottom + 16, kAxisColor, format_byte_size(bytes));
  }
  return out;
}

// "#rrggbb" at 60% of its brightness, for the dots on a curve: a screenshot test tells a drawn
// line from its dots and legend swatch by colour. Other colour forms are kept as they are.
std::string darker(const std::string& color) {
  if (color.size() != 7 || color[0] != '#' ||
      color.find_first_not_of("0123456789abcdefABCDEF", 1) != std::string::npos)
    return color;
  std::string out = "#";
  for (std::size_t i = 1; i < 7; i += 2)
    out += fmt::format("{:02x}", std::stoi(color.substr(i, 2), nullptr, 16) * 3 / 5);
  return out;
}

bool finite_point(const ChartSeries& s, std::size_t i) {
  return s.bytes[i] > 0 && std::isfinite(s.values[i]);
}

// The y axis of a line chart, linear or log10: where a value goes, and its grid lines.
struct YAxis {
  bool log = false;
  double lo = 0, hi = 1;  // the values (log: their log10) at the plot's bottom and top edges
  double step = 1;        // linear: between labelled grid lines
  double y_bottom = 0, height = 1;

  bool drawable(double value) const { return std::isfinite(value) && (!log || value > 0); }
  double at(double value) const {
    const double v = log ? std::log10(value) : std::max(0.0, value);
    return y_bottom - (v - lo) / (hi - lo) * height;
  }
};

YAxis line_chart_y_axis(const LineChart& chart, double y_bottom) {
  double max_value = 0, min_positive = std::numeric_limits<double>::infinity();
  for (const ChartSeries& s : chart.series)
    for (std::size_t i = 0; i < std::min(s.bytes.size(), s.values.size()); ++i)
      if (finite_point(s, i)) {
        max_value = std::max(max_value, s.values[i]);
        if (s.values[i] > 0) min_positive = std::min(min_positive, s.values[i]);
      }
  YAxis axis;
  axis.y_bottom = y_bottom;
  axis.height = chart.plot_height;
  if (chart.y_scale == YScale::log) {
    axis.log = true;
    if (std::isfinite(min_positive)) {
      axis.lo = std::max(-300.0, std::floor(std::log10(min_positive) + 1e-9));  // 10^lo stays normal
      axis.hi = std::ceil(std::log10(max_value) - 1e-9);
    }
    axis.hi = std::max(axis.hi, axis.lo + 1);
  } else {
    axis.step = nice_step(max_value > 0 ? max_value / 6 : 0.2);
    axis.hi = std::max(axis.step, std::ceil(max_value / axis.step - 1e-9) * axis.step);
  }
  return axis;
}

std::string y_ticks(const YAxis& axis, double x_left, double x_right) {
  std::string out;
  const auto grid = [&](double value, const char* color, bool labelled) {
    const double y = axis.at(value);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n", x_left,
                       y, x_right, y, color);
    if (labelled)
      out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n",
                         x_left - 8, y + 4, kAxisColor, tick_label(value));
  };
  if (!axis.log) {
    for (double v = 0; v <= axis.hi * (1 + 1e-9); v += axis.step) grid(v, kGridColor, true);
    return out;
  }
  const int first = static_cast<int>(axis.lo), last = static_cast<int>(axis.hi);
  const int every = std::max(1, (last - first + 9) / 10);  // at most about 10 labelled decades
  for (int exponent = first; exponent <= last; ++exponent) {
    const double decade = std::pow(10.0, exponent);
    if (every == 1 && exponent < last)
      for (double factor : {2.0, 5.0}) grid(factor * decade, kMinorGridColor, false);
    if ((exponent - first) % every == 0) grid(decade, kGridColor, true);
  }
  return out;
}

// One polyline per run of drawable points.
std::string series_lines(const ChartSeries& s, const LogAxis& x_axis, const YAxis& y_axis) {
  std::string out;
  const std::size_t n = std::min(s.bytes.size(), s.values.size());
  const std::string dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
  std::string points, dots;
  const std::string dot_color = darker(s.color);
  auto flush = [&] {
    if (!points.empty())
      out += fmt::format(
          "<polyline class=\"curve\" data-series=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} "
          "stroke-linejoin=\"round\" points=\"{}\"/>\n",
          html_text(s.id), html_text(s.color), s.dashed ? 1.6 : 2.4, dash, points);
    points.clear();
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!finite_point(s, i) || !y_axis.drawable(s.values[i])) {
      flush();
      continue;
    }
    const double x = x_axis.at(s.bytes[i]), y = y_axis.at(s.values[i]);
    points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x, y);
    dots += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}: {} B, {:.4g} "
        "GB/s</title></circle>\n",
        x, y, s.dashed ? 2 : 3, html_text(dot_color), html_text(s.label), s.bytes[i], s.values[i]);
  }
  flush();
  return out + dots;
}

// The shaded gap between two series: one polygon per run of sizes where both are drawable (at
// the same size).
std::string gap_band(const ChartBand& band, const std::vector<ChartSeries>& all, const LogAxis& x_axis,
                     const YAxis& y_axis) {
  const auto named = [&](const std::string& id) {
    return std::find_if(all.begin(), all.end(), [&](const ChartSeries& o) { return o.id == id; });
  };
  const auto upper_series = named(band.upper), other = named(band.lower);
  if (upper_series == all.end() || other == all.end()) return "";
  const ChartSeries& s = *upper_series;
  std::string out, upper, lower;
  auto flush = [&] {
    if (!upper.empty())
      out += fmt::format(
          "<polygon class=\"gap-band\" data-series=\"{}\" fill=\"{}\" fill-opacity=\"0.22\" stroke=\"none\" "
          "points=\"{} {}\"/>\n",
          html_text(s.id), html_text(s.color), upper, lower);
    upper.clear();
    lower.clear();
  };
  const std::size_t n = std::min({s.bytes.size(), s.values.size(), other->bytes.size(), other->values.size()});
  for (std::size_t i = 0; i < n; ++i) {
    if (s.bytes[i] != other->bytes[i] || !finite_point(s, i) || !finite_point(*other, i) ||
        !y_axis.drawable(s.values[i]) || !y_axis.drawable(other->values[i])) {
      flush();
      continue;
    }
    const double x = x_axis.at(s.bytes[i]);
    upper += fmt::format("{}{:.1f},{:.1f}", upper.empty() ? "" : " ", x, y_axis.at(s.values[i]));
    lower.insert(0, fmt::format("{:.1f},{:.1f}{}", x, y_axis.at(other->values[i]), lower.empty() ? "" : " "));
  }
  flush();
  return out;
}

// A dashed vertical line across the plot at a marker's size, its label at the top; nothing for a
// size outside the axis.
std::string marker_line(const ChartMarker& marker, const LogAxis& x_axis, double y_top, double y_bottom) {
  if (marker.bytes == 0) return "";
  const double x = x_axis.at(marker.bytes);
  if (!(x >= x_axis.x0 && x <= x_axis.x0 + x_axis.width)) return "";
  return fmt::format(
      "<line class=\"marker\" data-bytes=\"{0}\" x1=\"{1:.1f}\" y1=\"{2:.1f}\" x2=\"{1:.1f}\" y2=\"{3:.1f}\" "
      "stroke=\"#334155\" stroke-width=\"1.2\" stroke-dasharray=\"3 3\"><title>{4}</title></line>\n"
      "<text x=\"{5:.1f}\" y=\"{6:.1f}\" fill=\"#334155\" font-size=\"11\">{7}<title>{4}</title></text>\n",
      marker.bytes, x, y_top, y_bottom, html_text(marker.title), x + 4, y_top + 12, html_text(marker.label));
}

}  // namespace

std::string render_line_chart(const LineChart& chart) {
  const int height =
      kTop + chart.plot_height + kAxisBelow + kLegendRow * static_cast<int>(chart.series.size()) + 8;
  const double plot_w = chart.width - kLeft - kRight;
  const double y_top = kTop, y_bottom = kTop + chart.plot_height;
  const LogAxis x_axis = log_axis(chart.series, kLeft, plot_w);
  const YAxis y_axis = line_chart_y_axis(chart, y_bottom);

  std::string out = svg_open(chart.width, height, chart.title, "line-chart");
  out += y_ticks(y_axis, kLeft, kLeft + plot_w);
  out += x_ticks(x_axis, y_bottom, y_top);
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>\n",
                     kLeft, kTop, plot_w, chart.plot_height, kAxisColor);
  out += fmt::format(
      "<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\" "
      "fill=\"{}\">{}</text>\n",
      (y_top + y_bottom) / 2, (y_top + y_bottom) / 2, kAxisColor, html_text(chart.y_label));
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">message size (bytes, log "
      "scale)</text>\n",
      kLeft + plot_w / 2, y_bottom + 36, kAxisColor);

  for (const ChartBand& band : chart.bands) out += gap_band(band, chart.series, x_axis, y_axis);
  // Candidates first, so the defaults and the tuned curve are drawn on top.
  for (auto it = chart.series.rbegin(); it != chart.series.rend(); ++it)
    out += series_lines(*it, x_axis, y_axis);
  for (const ChartMarker& marker : chart.markers) out += marker_line(marker, x_axis, y_top, y_bottom);

  double legend_y = y_bottom + kAxisBelow + 10;
  for (const ChartSeries& s : chart.series) {
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"{}/>\n", kLeft,
        legend_y - 4, kLeft + 28, legend_y - 4, html_text(s.color),
        s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#111827\">{}<title>{}</title></text>\n",
                       kLeft + 36, legend_y, html_text(shorten(s.label, 120)), html_text(s.label));
    legend_y += kLegendRow;
  }
  return out + "</svg>\n";
}

namespace {

const char* bar_color(double ratio, double noise, bool with_plugin) {
  if (ratio > 1 + noise) return with_plugin ? "#15803d" : "#22c55e";
  if (ratio < 1 - noise) return with_plugin ? "#991b1b" : "#dc2626";
  return with_plugin ? "#6b7280" : "#9ca3af";
}

}  // namespace

std::string render_speedup_bars(const SpeedupBars& chart) {
  constexpr int kBottom = 42, kLegend = 20;
  const bool two = !chart.plugin_ratios.empty();
  const double plot_w = chart.width - kLeft - kRight;
  const double y_top = kTop + (two ? kLegend : 0), y_bottom = chart.height - kBottom;
  const double noise = std::isfinite(chart.noise_floor) ? std::max(0.0, chart.noise_floor) : 0;

  double lo = 1 - std::max(noise, 0.05), hi = 1 + std::max(noise, 0.05);
  for (const std::vector<double>* ratios : {&chart.ratios, &chart.plugin_ratios})
    for (double r : *ratios)
      if (std::isfinite(r)) lo = std::min(lo, r), hi = std::max(hi, r);
  const double step = nice_step((hi - lo) / 4);
  lo = std::max(0.0, std::floor(lo / step) * step);
  hi = std::ceil(hi / step) * step;
  const auto y_of = [&](double v) { return y_bottom - (v - lo) / (hi - lo) * (y_bottom - y_top); };

  std::string out = svg_open(chart.width, chart.height, chart.title, "speedup-chart");
  for (double v = lo; v <= hi + step * 1e-6; v += step) {
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n", kLeft,
                       y_of(v), kLeft + plot_w, y_of(v), kGridColor);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{:.2f}x</text>\n",
                       kLeft - 8, y_of(v) + 4, kAxisColor, v);
  }
  if (noise > 0)
    out += fmt::format(
        "<rect class=\"noise-band\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#9ca3af\" "
        "fill-opacity=\"0.18\"><title>noise floor: within {:.1f}% counts as no change</title></rect>\n",
        kLeft, y_of(1 + noise), plot_w, y_of(1 - noise) - y_of(1 + noise), noise * 100);
  if (two)  // which bar is which, above the plot
    out += fmt::format(
        "<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"12\" fill=\"#22c55e\"/>"
        "<text x=\"{2}\" y=\"{3}\" fill=\"#111827\">env alone (left bar)</text>"
        "<rect x=\"{4}\" y=\"{1}\" width=\"12\" height=\"12\" fill=\"#15803d\"/>"
        "<text x=\"{5}\" y=\"{3}\" fill=\"#111827\">env + tuner plugin (right bar, darker)</text>\n",
        kLeft, kTop - 8, kLeft + 18, kTop + 2, kLeft + 170, kLeft + 188);

  const std::size_t n = std::min(chart.bytes.size(), chart.ratios.size());
  const double band = n ? plot_w / static_cast<double>(n) : plot_w;
  const std::size_t label_every = std::max<std::size_t>(1, (n + 23) / 24);
  // One bar of the pair (or the only bar) at `center`, `width` wide.
  const auto bar = [&](double center, double width, double r, bool with_plugin, std::uint64_t bytes) {
    const double y1 = y_of(std::max(r, 1.0)), y2 = y_of(std::min(r, 1.0));
    out += fmt::format(
        "<rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "rx=\"2\">"
        "<title>{} B: {:.3f}x{}</title></rect>\n",
        with_plugin ? " with-plugin" : "", center - width / 2, y1, width, std::max(1.0, y2 - y1),
        bar_color(r, noise, with_plugin), bytes, r, with_plugin ? " with the tuner plugin" : "");
    if (width >= (two ? 24 : 21))
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\" "
          "fill=\"#374151\">{:.2f}</text>\n",
          center, r >= 1 ? y1 - 4 : y2 + 12, r);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double center = kLeft + band * (static_cast<double>(i) + 0.5);
    if (i % label_every == 0)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                         center, y_bottom + 16, kAxisColor, format_byte_size(chart.bytes[i]));
    const double r = chart.ratios[i];
    if (!two) {
      if (std::isfinite(r)) bar(center, band * 0.7, r, false, chart.bytes[i]);
      continue;
    }
    const double width = band * 0.4;
    if (std::isfinite(r)) bar(center - width / 2, width, r, false, chart.bytes[i]);
    const double p = i < chart.plugin_ratios.size() ? chart.plugin_ratios[i] : std::nan("");
    if (std::isfinite(p)) bar(center + width / 2, width, p, true, chart.bytes[i]);
  }
  out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#111827\"/>\n",
                     kLeft, y_of(1), kLeft + plot_w, y_of(1));
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"{}\"/>\n", kLeft,
      y_top, plot_w, y_bottom - y_top, kAxisColor);
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">message size (bytes)</text>\n",
      kLeft + plot_w / 2, y_bottom + 34, kAxisColor);
  out += fmt::format(
      "<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\" "
      "fill=\"{}\">{}</text>\n",
      (y_top + y_bottom) / 2, (y_top + y_bottom) / 2, kAxisColor, html_text(chart.y_label));
  return out + "</svg>\n";
}

}  // namespace nccltune
