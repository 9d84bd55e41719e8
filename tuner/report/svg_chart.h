// Charts for the HTML report as inline SVG: busbw curves against message size (log2 axis) and
// per-size speedup bars. Pure functions from values to markup; colours are SVG attributes, so a
// chart also renders on its own, outside the report's stylesheet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nccltune {

struct ChartSeries {
  std::string id;     // a fixed name from the caller ("defaults", "tuned", "candidate-1"): the
                      // polyline's data-series attribute, which tests and styles select on
  std::string label;  // legend text; untrusted (escaped)
  std::string color;  // an SVG colour, "#1f77b4"
  bool dashed = false;
  std::vector<std::uint64_t> bytes;  // x, ascending
  std::vector<double> values;        // y, parallel to bytes; NaN/inf leave a gap in the line
};

// The gap between two series of the same sizes, shaded in the colour of `upper` (the ratio band:
// on a log axis its height is their ratio). Series ids; a band naming an absent one draws nothing.
struct ChartBand {
  std::string upper, lower;
};

// A size marked across the plot by a dashed vertical line: where a per-size choice switches.
struct ChartMarker {
  std::uint64_t bytes = 0;
  std::string label;  // a few words at the top of the line ("switch ~1.1M"); untrusted (escaped)
  std::string title;  // the line's tooltip, the whole story; untrusted (escaped)
};

enum class YScale { linear, log };

struct LineChart {
  std::string title;    // the SVG's <title> (accessible name); untrusted (escaped)
  std::string y_label;  // "busbw (GB/s)"; say so when the scale is log
  std::vector<ChartSeries> series;
  YScale y_scale = YScale::linear;
  std::vector<ChartBand> bands;
  // Drawn where they fall within the series' sizes; the axis is not widened for them.
  std::vector<ChartMarker> markers;
  int width = 1180;
  int plot_height = 320;  // the legend adds a row per series below the plot
};

// X: bytes on a log2 axis with labels such as 8, 1K, 64M. Y, linear: from 0 to a round number
// above the largest finite value. Y, log: log10 from the decade at or below the smallest positive
// finite value to the decade at or above the largest (at least one decade), labelled at each
// decade; values that are not positive cannot be drawn there and leave a gap like NaN does.
// Each series is one polyline per run of drawable points, with a dot in a darker shade of its
// colour on every such point, and a legend row. Each band is a shaded polygon (class "gap-band",
// data-series its upper series) per run of sizes where both series are drawable, under the lines.
// Each marker is a line of class "marker" (data-bytes its size) with its label beside its top.
std::string render_line_chart(const LineChart& chart);

struct SpeedupBars {
  std::string title;
  std::vector<std::uint64_t> bytes;
  std::vector<double> ratios;  // tuned / defaults per size; non-finite ratios draw no bar
  // env + tuner plugin / defaults per size, drawn beside each ratio's bar; empty: none.
  std::vector<double> plugin_ratios;
  double noise_floor = 0;      // ratios within 1 +- noise_floor are drawn as "no change"
  int width = 1180, height = 260;
  std::string y_label = "speedup over the defaults (linear)";  // what a ratio is, beside the axis
};

// One bar per size from the 1.0 line up (faster) or down (slower), labelled with its ratio, on
// a linear axis; the noise band around 1.0 is shaded. With plugin_ratios, two bars per size side
// by side (class "bar" the env alone, "bar with-plugin" env + plugin, in a darker shade) and a
// legend above the plot.
std::string render_speedup_bars(const SpeedupBars& chart);

}  // namespace nccltune
