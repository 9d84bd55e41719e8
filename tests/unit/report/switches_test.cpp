// Where a per-size choice switches between measured sizes, and why: the words every
// renderer uses (profile_text.h), the view's place for each switch among the measured sizes, and
// `show`, the report's tables and its busbw chart saying it for tests/fixtures/profiles/switches-2n.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "base/markup_text.h"
#include "report/profile_summary.h"
#include "report/profile_text.h"
#include "report/profile_view.h"
#include "report/report_html.h"
#include "report/svg_chart.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::occurrences;

namespace {

Profile switches_fixture() {
  auto profile = read_profile(fixture("profiles/switches-2n.yaml"));
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : Profile{};
}

const std::string kCrossingLine =
    "Tree/LL -> Ring/LL128 at ~20.1K, where the fitted costs cross (measured faster: Tree/LL at 1K, "
    "Ring/LL128 at 64K; fits: Tree/LL 6.0 us + 2.0 GB/s, Ring/LL128 14.0 us + 9.0 GB/s)";
const std::string kMeasuredLine =
    "Ring/LL128 -> NVLS/Simple at 1M, as measured: the fitted costs do not cross in between "
    "(outside-bracket; measured faster: Ring/LL128 at 64K, NVLS/Simple at 1M; fits: Ring/LL128 20.0 us + "
    "40.0 GB/s, NVLS/Simple 12.0 us + 110.0 GB/s)";

SwitchView switch_view(SizeSwitch at) {
  const bool crossing = at.fit == "crossing";
  return {std::move(at), crossing, 0};
}

// The report of `profile`, with nothing but the profile.
std::string report_of(const Profile& profile) {
  ReportInput in;
  in.profile = profile;
  in.profile_source = "switches-2n.yaml";
  in.generated_by = "nccltune test";
  return render_report_html(in);
}

}  // namespace

TEST(Switches, SizesBetweenGridPointsReadShortAndSayWhenRounded) {
  EXPECT_EQ(format_size_near(512), "512");
  EXPECT_EQ(format_size_near(1048576), "1M");
  EXPECT_EQ(format_size_near(1310720), "1.25M");
  EXPECT_EQ(format_size_near(1572864), "1.5M");
  EXPECT_EQ(format_size_near(1152000), "~1.1M");
  EXPECT_EQ(format_size_near(20572), "~20.1K");
  EXPECT_EQ(format_size_near(302168), "~295K");
  EXPECT_EQ(format_size_near(1023 * 1024 + 1000), "~1024K");
}

TEST(Switches, FitsReadAsLatencyPlusBandwidth) {
  EXPECT_EQ(describe_cost_fit(5, 16), "5.0 us + 16.0 GB/s");
  EXPECT_EQ(describe_cost_fit(-0.25, 42.66), "-0.2 us + 42.7 GB/s");
  EXPECT_EQ(describe_cost_fit(3, 0.012), "3.0 us + 0.012 GB/s");
  EXPECT_EQ(describe_cost_fit(3, 0), "3.0 us, flat");
}

TEST(Switches, EachLineNamesTheSwitchItsBracketAndItsFits) {
  EXPECT_EQ(describe_switch(switch_view(
                {1048576, 1310720, 1152000, "crossing", "Tree/LL128", "Ring/LL128", 5, 16, 50, 42.7})),
            "Tree/LL128 -> Ring/LL128 at ~1.1M, where the fitted costs cross (measured faster: Tree/LL128 at "
            "1M, Ring/LL128 at 1.25M; fits: Tree/LL128 5.0 us + 16.0 GB/s, Ring/LL128 50.0 us + 42.7 GB/s)");
  EXPECT_EQ(describe_switch(switch_view(
                {1048576, 1310720, 1310720, "parallel", "Tree/LL128", "Ring/LL128", 5, 16, 50, 16})),
            "Tree/LL128 -> Ring/LL128 at 1.25M, as measured: the fitted costs run parallel, one bandwidth "
            "(parallel; measured faster: Tree/LL128 at 1M, Ring/LL128 at 1.25M; fits: Tree/LL128 5.0 us + "
            "16.0 GB/s, Ring/LL128 50.0 us + 16.0 GB/s)");
  EXPECT_NE(
      describe_switch(switch_view({1, 4, 4, "no-bandwidth", "Tree/LL", "Ring/LL", 5, 0, 9, 1}))
          .find("at 4, as measured: a fitted time does not grow with size (no-bandwidth; measured faster: "
                "Tree/LL at 1, Ring/LL at 4; fits: Tree/LL 5.0 us, flat, Ring/LL 9.0 us + 1.0 GB/s)"),
      std::string::npos);
}

TEST(Switches, TheViewPlacesEachSwitchAmongTheMeasuredSizes) {
  const Profile profile = switches_fixture();
  const ProfileView view = view_profile(profile);
  const CollectiveView& c = view.sections.front().collectives.front();
  ASSERT_EQ(c.switches.size(), 2u);
  // Measured: 8, 1K, 64K, 1M, 1G. ~20.1K comes after 8 and 1K; 1M after 64K, before the 1M row.
  EXPECT_TRUE(c.switches[0].in_per_size && c.switches[1].in_per_size);
  EXPECT_TRUE(c.switches[0].crossing);
  EXPECT_EQ(c.switches[0].sizes_below, 2u);
  EXPECT_FALSE(c.switches[1].crossing);
  EXPECT_EQ(c.switches[1].sizes_below, 3u);
  EXPECT_EQ(describe_switch(c.switches[0]), kCrossingLine);
  EXPECT_EQ(describe_switch(c.switches[1]), kMeasuredLine);
}

// The confirmation may cut a range back after the search placed a switch at its start: the line
// says that per_size no longer changes range there.
TEST(Switches, ASwitchPerSizeNoLongerHasIsSaidToBeSo) {
  Profile profile = switches_fixture();
  std::vector<SizeChoice>& ranges = profile.collectives.at("all_reduce").per_size;
  ASSERT_EQ(ranges.at(1).min_bytes, 20572u);
  ranges.at(1).min_bytes = 32768;  // 20572..32767: NCCL's own choice now
  const ProfileView view = view_profile(profile);
  const CollectiveView& c = view.sections.front().collectives.front();
  EXPECT_FALSE(c.switches.at(0).in_per_size);
  EXPECT_TRUE(c.switches.at(1).in_per_size);
  EXPECT_EQ(describe_switch(c.switches.at(0)), kCrossingLine + "; per_size no longer changes range there");
  EXPECT_EQ(describe_switch(c.switches.at(1)), kMeasuredLine);
}

TEST(Switches, ShowSaysThemUnderThePerSizeRanges) {
  const std::string text = render_profile_summary(switches_fixture(), "switches-2n.yaml");
  EXPECT_NE(
      text.find("  1M .. 1G           NVLS/Simple\n"
                "  above 1G           not measured: NCCL's own choice\n"
                "switches (where a choice gives way to the next; fits: time = latency + bytes / bandwidth)\n"
                "  " +
                kCrossingLine + "\n  " + kMeasuredLine + "\n\n"),
      std::string::npos)
      << text;
  const std::string without = render_profile_summary(*read_profile(fixture("profiles/h100-2n.yaml")), "x");
  EXPECT_EQ(without.find("switches"), std::string::npos) << without;
}

TEST(Switches, TheReportSaysThemBesideTheRangesInThePerSizeTableAndOnTheChart) {
  const std::string html = report_of(switches_fixture());
  // Chosen settings: an item per switch under the ranges.
  EXPECT_NE(html.find("<ul class=\"switches\">\n<li>" + escape_markup(kCrossingLine) + "</li>\n<li>" +
                      escape_markup(kMeasuredLine) + "</li>\n</ul>\n"),
            std::string::npos)
      << html;
  // The per-size table: a row across it between the sizes around each switch.
  const std::regex rows(
      "<td class=\"num\">1K</td>.*?</tr>\n<tr class=\"switch\"><td colspan=\"6\">switch: Tree/LL -&gt; "
      "Ring/LL128 at ~20.1K, where the fitted costs cross[^<]*</td></tr>\n<tr><td "
      "class=\"num\">64K</td>.*?</tr>\n"
      "<tr class=\"switch\"><td colspan=\"6\">switch: Ring/LL128 -&gt; NVLS/Simple at 1M, as "
      "measured[^<]*</td></tr>\n"
      "<tr><td class=\"num\">1M</td>");
  EXPECT_TRUE(std::regex_search(html, rows)) << html;
  // The busbw chart: a marker at each switch, its whole story as the tooltip.
  EXPECT_NE(html.find("<line class=\"marker\" data-bytes=\"20572\""), std::string::npos);
  EXPECT_NE(html.find("<line class=\"marker\" data-bytes=\"1048576\""), std::string::npos);
  EXPECT_NE(html.find(">switch ~20.1K<title>" + escape_markup(kCrossingLine) + "</title></text>"),
            std::string::npos);

  const std::string without = report_of(*read_profile(fixture("profiles/h100-2n.yaml")));
  EXPECT_EQ(occurrences(without, "class=\"switch"), 0u);
  EXPECT_EQ(occurrences(without, "class=\"marker\""), 0u);
}

TEST(Switches, AChartDrawsMarkersWithinItsSizesOnly) {
  LineChart chart;
  chart.series.push_back({"tuned", "tuned", "#16a34a", false, {1024, 1048576}, {1, 100}});
  chart.markers = {{32768, "switch <32K>", "why & how"}, {1073741824, "beyond", "off the axis"}};
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(occurrences(svg, "class=\"marker\""), 1u);
  EXPECT_NE(svg.find("data-bytes=\"32768\""), std::string::npos);
  EXPECT_NE(svg.find(">switch &lt;32K&gt;<title>why &amp; how</title></text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("beyond"), std::string::npos);
}
