// The report's SVG charts: one polyline per series and run of finite points, x growing with the
// size on a log axis, y growing with busbw (linear, or log10 with a decade per fixed height),
// escaped labels, speedup bars coloured by the noise floor.
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "report_fixtures.h"

using namespace nccltune;
using nccltune::test_support::occurrences;

namespace {

struct Point {
  double x, y;
};

// The points of every polyline of one series, in document order.
std::vector<std::vector<Point>> polylines(const std::string& svg, const std::string& series) {
  std::vector<std::vector<Point>> lines;
  const std::regex line("<polyline class=\"curve\" data-series=\"" + series + "\"[^>]* points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it) {
    std::vector<Point> points;
    std::istringstream in((*it)[1].str());
    std::string pair;
    while (in >> pair) {
      const auto comma = pair.find(',');
      points.push_back({std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1))});
    }
    lines.push_back(points);
  }
  return lines;
}

LineChart two_curves() {
  LineChart chart;
  chart.title = "busbw";
  chart.y_label = "busbw (GB/s)";
  const std::vector<std::uint64_t> sizes = {8, 1024, 1 << 20, 64 << 20};
  chart.series.push_back({"defaults", "NCCL defaults", "#64748b", false, sizes, {0.1, 5, 120, 300}});
  chart.series.push_back({"tuned", "tuned profile", "#16a34a", false, sizes, {0.1, 6, 150, 420}});
  return chart;
}

}  // namespace

TEST(SvgChart, DotsAreADarkerShadeThanTheirLineAndLegend) {
  // The browser test counts the line's colour on a screenshot: dots must not count as the line.
  LineChart chart = two_curves();
  chart.series.push_back({"named", "a named colour", "purple", true, chart.series[0].bytes, {1, 2, 3, 4}});
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(occurrences(svg, "<circle"), 12u);
  EXPECT_EQ(occurrences(svg, "fill=\"#3c4553\""), 4u);  // #64748b at 60%
  EXPECT_EQ(occurrences(svg, "fill=\"#0d612c\""), 4u);  // #16a34a at 60%
  EXPECT_EQ(occurrences(svg, "fill=\"purple\""), 4u);   // not #rrggbb: kept
  EXPECT_EQ(occurrences(svg, "fill=\"#64748b\""), 0u);
  EXPECT_EQ(occurrences(svg, "stroke=\"#64748b\""), 2u);  // the polyline and the legend swatch
  EXPECT_EQ(occurrences(svg, "stroke=\"#16a34a\""), 2u);
}

TEST(SvgChart, OnePolylinePerSeriesThroughEveryPoint) {
  const std::string svg = render_line_chart(two_curves());
  ASSERT_EQ(polylines(svg, "defaults").size(), 1u);
  ASSERT_EQ(polylines(svg, "tuned").size(), 1u);
  EXPECT_EQ(polylines(svg, "defaults")[0].size(), 4u);
  EXPECT_EQ(polylines(svg, "tuned")[0].size(), 4u);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(SvgChart, XIsLogOfSizeAndYGrowsWithBusbw) {
  const std::string svg = render_line_chart(two_curves());
  const auto defaults = polylines(svg, "defaults")[0];
  const auto tuned = polylines(svg, "tuned")[0];
  // 8 -> 1K -> 1M -> 64M are 7, 10, 6 doublings apart: the gaps are in that proportion.
  const double unit = (defaults[1].x - defaults[0].x) / 7;
  EXPECT_NEAR(defaults[2].x - defaults[1].x, 10 * unit, 0.2);
  EXPECT_NEAR(defaults[3].x - defaults[2].x, 6 * unit, 0.2);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(defaults[i].x, tuned[i].x);
  // SVG y grows downwards: more busbw is higher up.
  EXPECT_LT(tuned[3].y, defaults[3].y);
  EXPECT_LT(defaults[3].y, defaults[2].y);
  EXPECT_DOUBLE_EQ(tuned[0].y, defaults[0].y);
}

TEST(SvgChart, LabelsEveryPowerOfTwoInBytesUnits) {
  LineChart chart;
  chart.series.push_back({"tuned", "tuned", "#16a34a", false, {8, 1024, 4096}, {1, 2, 3}});
  const std::string svg = render_line_chart(chart);
  for (const char* label : {">8<", ">16<", ">512<", ">1K<", ">2K<", ">4K<"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
}

TEST(SvgChart, ThinsSizeLabelsOnAWideRange) {
  LineChart chart;
  chart.series.push_back({"tuned", "tuned", "#16a34a", false, {8, 16ull << 30}, {1, 2}});  // 32 doublings
  const std::string svg = render_line_chart(chart);
  const std::regex label("<text [^>]*text-anchor=\"middle\" fill=\"#6b7280\">[0-9]+[KMG]?</text>");
  const auto labels =
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), label), std::sregex_iterator());
  EXPECT_GE(labels, 8);
  EXPECT_LE(labels, 13);
  EXPECT_NE(svg.find(">8<"), std::string::npos);
}

TEST(SvgChart, NonFiniteValuesBreakTheLine) {
  LineChart chart = two_curves();
  chart.series[1].values[1] = std::nan("");
  const auto lines = polylines(render_line_chart(chart), "tuned");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), 1u);
  EXPECT_EQ(lines[1].size(), 2u);
}

TEST(SvgChart, EscapesLabelsAndTitle) {
  LineChart chart = two_curves();
  chart.title = "</title><script>alert(1)</script>";
  chart.series[0].label = "NCCL_X=<img src=x onerror=alert(1)>";
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_NE(svg.find("&lt;/title&gt;&lt;script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("NCCL_X=&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
}

TEST(SvgChart, DashedSeriesAreDashedInLineAndLegend) {
  LineChart chart = two_curves();
  chart.series.push_back(
      {"candidate-1", "candidate", "#7c3aed", true, chart.series[0].bytes, {0.1, 5.5, 130, 350}});
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(occurrences(svg, "stroke-dasharray=\"6 4\""), 2u);  // its polyline and its legend swatch
}

TEST(SpeedupBars, OneBarPerFiniteRatioColouredAgainstTheNoiseFloor) {
  SpeedupBars bars;
  bars.bytes = {8, 1024, 1 << 20, 64 << 20};
  bars.ratios = {1.005, 1.30, std::nan(""), 0.90};
  bars.noise_floor = 0.01;
  const std::string svg = render_speedup_bars(bars);
  EXPECT_EQ(occurrences(svg, "class=\"bar\""), 3u);
  EXPECT_EQ(occurrences(svg, "fill=\"#22c55e\""), 1u);     // 1.30: faster
  EXPECT_EQ(occurrences(svg, "fill=\"#dc2626\""), 1u);     // 0.90: slower
  EXPECT_EQ(occurrences(svg, "fill=\"#9ca3af\" rx"), 1u);  // 1.005: within the noise
  EXPECT_NE(svg.find("class=\"noise-band\""), std::string::npos);
  EXPECT_NE(svg.find(">1.30<"), std::string::npos);
}

TEST(SpeedupBars, FasterBarsRiseAboveTheOneLineAndSlowerFallBelow) {
  SpeedupBars bars;
  bars.bytes = {8, 16};
  bars.ratios = {1.2, 0.8};
  const std::string svg = render_speedup_bars(bars);
  const std::regex bar("class=\"bar\" x=\"[0-9.]+\" y=\"([0-9.]+)\" width=\"[0-9.]+\" height=\"([0-9.]+)\"");
  std::vector<std::pair<double, double>> spans;  // top, bottom
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator(); ++it)
    spans.emplace_back(std::stod((*it)[1]), std::stod((*it)[1]) + std::stod((*it)[2]));
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_NEAR(spans[0].second, spans[1].first, 0.11);  // both meet at the 1.0 line
  EXPECT_NEAR(spans[0].second - spans[0].first, spans[1].second - spans[1].first, 0.2);  // +-0.2 alike
}

namespace {

LineChart log_chart(std::vector<double> values) {
  LineChart chart;
  chart.y_label = "busbw (GB/s, log scale)";
  chart.y_scale = YScale::log;
  std::vector<std::uint64_t> sizes;
  for (std::size_t i = 0; i < values.size(); ++i) sizes.push_back(std::uint64_t{8} << (2 * i));
  chart.series.push_back({"tuned", "tuned", "#16a34a", false, sizes, std::move(values)});
  return chart;
}

// The y labels (right-aligned text left of the plot), bottom to top.
std::vector<std::string> y_labels(const std::string& svg) {
  std::vector<std::string> labels;
  const std::regex label("<text [^>]*text-anchor=\"end\" fill=\"#6b7280\">([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator(); ++it)
    labels.push_back((*it)[1]);
  return labels;
}

}  // namespace

TEST(SvgChart, LogScaleGivesEachDecadeTheSameHeight) {
  // 0.1 -> 1 and 10 -> 100 are both one decade: on a linear axis the first would be ~0 pixels.
  const auto line = polylines(render_line_chart(log_chart({0.1, 1, 10, 100})), "tuned");
  ASSERT_EQ(line.size(), 1u);
  ASSERT_EQ(line[0].size(), 4u);
  const double decade = line[0][0].y - line[0][1].y;
  EXPECT_GT(decade, 50);  // 320 pixels over 3 decades
  EXPECT_NEAR(line[0][1].y - line[0][2].y, decade, 0.2);
  EXPECT_NEAR(line[0][2].y - line[0][3].y, decade, 0.2);
  // 0.1 and 100 are decades themselves: the curve spans the plot from bottom (14 + 320) to top.
  EXPECT_NEAR(line[0][0].y, 334, 0.1);
  EXPECT_NEAR(line[0][3].y, 14, 0.1);
}

TEST(SvgChart, LogScaleLabelsEveryDecadeAroundTheValues) {
  const std::string svg = render_line_chart(log_chart({0.03, 2, 40, 420}));
  EXPECT_EQ(y_labels(svg), (std::vector<std::string>{"0.01", "0.1", "1", "10", "100", "1000"}));
  EXPECT_NE(svg.find(">busbw (GB/s, log scale)<"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "stroke=\"#f3f4f6\""), 10u);  // unlabelled 2 and 5 x 10^k in 5 decades
  // The linear axis of the same values starts at 0 and never labels 0.01.
  LineChart linear = log_chart({0.03, 2, 40, 420});
  linear.y_scale = YScale::linear;
  EXPECT_EQ(y_labels(render_line_chart(linear)).front(), "0");
}

TEST(SvgChart, LogScaleLeavesAGapAndNoDotForValuesItCannotShow) {
  for (double bad : {0.0, -3.0, std::nan(""), HUGE_VAL}) {
    const std::string svg = render_line_chart(log_chart({0.5, 2, bad, 40, 300}));
    const auto lines = polylines(svg, "tuned");
    ASSERT_EQ(lines.size(), 2u) << bad;
    EXPECT_EQ(lines[0].size(), 2u);
    EXPECT_EQ(lines[1].size(), 2u);
    EXPECT_EQ(occurrences(svg, "<circle"), 4u) << bad;
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
  }
  // The dots keep the real value in their tooltip.
  EXPECT_NE(render_line_chart(log_chart({0.25, 2})).find("0.25 GB/s</title>"), std::string::npos);
}

TEST(SvgChart, LogScaleWithinOneDecadeOrWithoutPositiveValuesStillRenders) {
  const std::string svg = render_line_chart(log_chart({2, 3, 5}));
  EXPECT_EQ(y_labels(svg), (std::vector<std::string>{"1", "10"}));
  const auto line = polylines(svg, "tuned");
  ASSERT_EQ(line.size(), 1u);
  EXPECT_GT(line[0][0].y, line[0][1].y);
  EXPECT_GT(line[0][1].y, line[0][2].y);
  EXPECT_EQ(y_labels(render_line_chart(log_chart({10, 10}))), (std::vector<std::string>{"10", "100"}));
  const std::string empty = render_line_chart(log_chart({0, -1, std::nan("")}));
  EXPECT_TRUE(polylines(empty, "tuned").empty());
  EXPECT_EQ(occurrences(empty, "<circle"), 0u);
  EXPECT_NE(empty.find("</svg>"), std::string::npos);
}
