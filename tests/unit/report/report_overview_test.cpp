// The answer first: the report's overview table (what ships, what it buys per collective and
// communicator shape) before any chart, rendered from the view `show` prints (profile_view.h); per
// collective the speedup chart before the busbw chart; and `report --summary`'s closing lines.
#include "report/profile_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/byte_size.h"
#include "fleet/fleet_output.h"
#include "report/at_a_glance.h"
#include "report/html_text.h"
#include "report/profile_numbers.h"
#include "report/profile_text.h"
#include "report/report_html.h"
#include "report/svg_chart.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::occurrences;
using nccltune::test_support::read_report_profile;

namespace {

Profile plugin_confirmed_profile() {
  auto profile = read_profile(fixture("profiles/with-plugin-2n.yaml"));
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : Profile{};
}

// The demo's four collectives, with a rail section holding all_reduce (profile v3).
Profile profile_with_a_rail() {
  Profile p = read_report_profile("collectives/2n.yaml");
  CommunicatorSection rail{2, 1, CommRole::rail, {}};
  rail.collectives["all_reduce"] = p.collectives.at("all_reduce");
  rail.collectives["all_reduce"].results.speedup_geomean = 1.25;
  p.shapes.push_back(rail);
  p.withheld.push_back({{{"NCCL_ALGO", "Tree"}}, "rail (2 nodes x 1): all_reduce -20% at 1M"});
  return p;
}

FleetSurvey fleet_of_8() {
  auto survey = read_fleet_survey(fixture("fleet/survey-8n.json"));
  EXPECT_TRUE(survey) << survey.error();
  return survey ? *survey : FleetSurvey{};
}

std::string section_of(const std::string& html, const std::string& id) {
  const std::size_t at = html.find("<section id=\"" + id + "\">");
  return at == std::string::npos ? "" : html.substr(at, html.find("</section>", at) - at);
}

}  // namespace

TEST(ReportOverview, TheTableComesBeforeTheFirstChartAndNamesEveryCollective) {
  ReportInput in;
  in.profile = read_report_profile("collectives/2n.yaml");
  const std::string html = render_report_html(in);
  const std::size_t table = html.find("<table class=\"overview\">");
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(table, html.find("<svg"));
  EXPECT_LE(occurrences(html, "class=\"card\""), 4u);
  const std::string overview = section_of(html, "overview");
  EXPECT_NE(overview.find("<strong>Ships:</strong> env <code>" + describe_env(in.profile.env) + "</code>"),
            std::string::npos)
      << overview;
  for (const auto& [op, collective] : in.profile.collectives) {
    const std::size_t row = overview.find("<td><strong>" + op + "</strong></td>");
    ASSERT_NE(row, std::string::npos) << op;
    // The geometric mean as show prints it, in this collective's row.
    const std::string row_text = overview.substr(row, overview.find("</tr>", row) - row);
    EXPECT_NE(row_text.find(format_speedup(collective.results.speedup_geomean)), std::string::npos) << op;
    for (const SizeChoice& choice : collective.per_size)
      EXPECT_NE(row_text.find(html_text(describe_range(choice) + " " + describe_choice(choice))), std::string::npos)
          << op;
  }
}

TEST(ReportOverview, PerCollectiveTheSpeedupChartComesBeforeTheBusbwChart) {
  ReportInput in;
  in.profile = read_report_profile("collectives/2n.yaml");
  const std::string html = render_report_html(in);
  for (const auto& [op, collective] : in.profile.collectives) {
    const std::size_t speedup = html.find("<section id=\"speedup-" + op + "\">");
    ASSERT_NE(speedup, std::string::npos) << op;
    EXPECT_LT(speedup, html.find("<section id=\"busbw-" + op + "\">")) << op;
  }
  EXPECT_NE(html.find("speedup over the defaults (linear)"), std::string::npos);
}

TEST(ProfileView, AnEntryPerCollectiveAndShapeWithShowsValues) {
  const Profile p = profile_with_a_rail();
  const ProfileView view = view_profile(p);
  ASSERT_EQ(view.sections.size(), 2u);
  ASSERT_EQ(view.sections[0].collectives.size(), p.collectives.size());
  ASSERT_EQ(view.sections[1].collectives.size(), 1u);
  const CollectiveView& rail = view.sections[1].collectives[0];
  EXPECT_EQ(view.sections[1].role, CommRole::rail);
  EXPECT_EQ(describe_section(section_shape(view.sections[1])), "rail: 2 nodes x 1 rank");
  EXPECT_EQ(rail.name, "all_reduce");
  EXPECT_DOUBLE_EQ(rail.tuned.geomean, 1.25);
  for (const SectionView& section : view.sections) {
    for (const CollectiveView& v : section.collectives) {
      const CollectiveProfile& c =
          section.role == CommRole::world ? p.collectives.at(v.name) : p.shapes[0].collectives.at(v.name);
      EXPECT_EQ(v.confirmation == Confirmation::guard, c.guard) << v.name;
      EXPECT_EQ(confirmation_words(v.confirmation), c.guard ? "guard" : "not confirmed") << v.name;  // no plugin run
      EXPECT_EQ(v.plugin_choices.size(), c.guard ? 0u : c.per_size.size()) << v.name;
      EXPECT_EQ(v.peak_percent, percent_of_peak(c.results, c.results.sizes.size() - 1)) << v.name;
      ASSERT_TRUE(v.tuned.best) << v.name;
      for (std::size_t i = 0; i < c.results.sizes.size(); ++i) {
        if (std::isfinite(speedup_at(c.results, i))) {
          EXPECT_GE(v.tuned.best->ratio, speedup_at(c.results, i)) << v.name;
        }
      }
    }
  }
  ReportInput in;
  in.profile = p;
  const std::string html = render_report_html(in);
  EXPECT_NE(section_of(html, "overview").find("Withheld from env: NCCL_ALGO=Tree: rail (2 nodes x 1): all_reduce "
                                              "-20% at 1M"),
            std::string::npos);
  EXPECT_NE(section_of(html, "overview").find("rail<br><span class=\"sub\">2 nodes x 1 rank</span>"),
            std::string::npos);
}

TEST(ProfileView, TheGainWithThePluginAndItsBarsSideBySide) {
  const Profile p = plugin_confirmed_profile();
  const ProfileView view = view_profile(p);
  for (const CollectiveView& v : view.sections.front().collectives) {
    const ProfileResults& r = p.collectives.at(v.name).results;
    ASSERT_EQ(v.with_plugin.has_value(), !r.with_plugin.empty()) << v.name;
    if (v.with_plugin) {
      EXPECT_DOUBLE_EQ(v.with_plugin->geomean, r.with_plugin_speedup_geomean);
    }
  }
  SpeedupBars bars;
  bars.bytes = {1024, 1 << 20};
  bars.ratios = {1.0, 1.5};
  bars.plugin_ratios = {2.0, std::nan("")};  // no bar where the ratio is unknown
  const std::string svg = render_speedup_bars(bars);
  EXPECT_EQ(occurrences(svg, "class=\"bar\""), 2u);
  EXPECT_EQ(occurrences(svg, "class=\"bar with-plugin\""), 1u);
  EXPECT_NE(svg.find("2.00x"), std::string::npos);  // the axis reaches the plugin's bar
}

TEST(AtAGlance, TheDemosClosingLinesInTenOrFewer) {
  const Profile p = plugin_confirmed_profile();
  const FleetSurvey fleet = fleet_of_8();
  const std::string text =
      render_at_a_glance(p, &fleet, {{"report", "/out/report.html"}, {"fleet", "/out/fleet.html"}});
  EXPECT_LE(occurrences(text, "\n"), 10u) << text;
  EXPECT_NE(text.find("suspects 8 nodes x 2 GPU: n3 slow (network: 6 of 6 pairs at 60-63% of median); link n1 - n5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("n6 failed (hang)"), std::string::npos) << text;
  EXPECT_NE(text.find("ships    env NCCL's defaults (nothing beat them beyond the noise floor) and the tuner "
                      "plugin's per-size choices for all_gather, all_reduce\n"),
            std::string::npos)
      << text;
  for (const auto& [op, c] : p.collectives) {
    const std::size_t line = text.find("gain     " + op + " ");
    ASSERT_NE(line, std::string::npos) << op << "\n" << text;
    const std::string gain = text.substr(line, text.find('\n', line) - line);
    EXPECT_NE(gain.find(format_speedup(c.results.speedup_geomean)), std::string::npos) << gain;
    if (!c.guard && !c.results.with_plugin.empty()) {
      EXPECT_NE(gain.find(format_speedup(c.results.with_plugin_speedup_geomean) + " with the plugin"),
                std::string::npos)
          << gain;
    }
  }
  EXPECT_NE(text.find("report   /out/report.html\nfleet    /out/fleet.html\n"), std::string::npos) << text;
  // The best size is the view's, the larger of the env alone's and the plugin's.
  const ProfileView view = view_profile(p);
  for (const CollectiveView& v : view.sections.front().collectives) {
    const std::size_t line = text.find("gain     " + v.name + " ");
    const std::string gain = text.substr(line, text.find('\n', line) - line);
    ASSERT_TRUE(v.tuned.best) << v.name;
    BestSize best = *v.tuned.best;
    if (v.with_plugin && v.with_plugin->best && v.with_plugin->best->ratio > best.ratio) best = *v.with_plugin->best;
    EXPECT_NE(gain.find(", best " + format_speedup(best.ratio) + " at " + format_byte_size(best.bytes)), std::string::npos)
        << gain;
  }
}

TEST(AtAGlance, OtherShapesShareTheirCollectivesLineAndHostileNamesArePrintable) {
  const Profile p = profile_with_a_rail();
  FleetSurvey fleet = fleet_of_8();
  fleet.suspects[0].node = "n3\x1b[2J";
  const std::string text = render_at_a_glance(p, &fleet, {});
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("n3\\x1b[2J"), std::string::npos) << text;
  EXPECT_EQ(occurrences(text, "gain     all_reduce "), 1u) << text;
  EXPECT_NE(text.find("; rail: 1.250x env alone (not confirmed)"), std::string::npos) << text;
  EXPECT_NE(text.find("withheld NCCL_ALGO=Tree: rail"), std::string::npos) << text;
  EXPECT_NE(text.find("(a guard: measured, not tuned)"), std::string::npos) << text;
}

TEST(ReportOverview, TheFleetPageHasTheOneLineHeader) {
  const std::string html = render_fleet_report_html(fleet_of_8(), "fleet.json", "", "test");
  EXPECT_NE(html.find("<p class=\"glance\">8 nodes x 2 GPU \u00b7 all_reduce at " +
                      format_byte_size(fleet_of_8().bytes)),
            std::string::npos)
      << html.substr(0, 3000);
  EXPECT_EQ(occurrences(html, "class=\"card\""), 0u);
  EXPECT_NE(html.find("class=\"fleet-heatmap\""), std::string::npos);
}

TEST(LineChart, ShadesTheGapBetweenTwoSeries) {
  LineChart chart;
  chart.series.push_back({"tuned", "tuned", "#16a34a", false, {8, 1024, 4096}, {2, std::nan(""), 4}});
  chart.series.push_back({"defaults", "defaults", "#64748b", false, {8, 1024, 4096}, {1, 2, 3}});
  chart.bands.push_back({"tuned", "defaults"});
  chart.bands.push_back({"absent", "defaults"});  // names no series: nothing
  const std::string svg = render_line_chart(chart);
  // The unknown value at 1K splits the band into two runs of one size each.
  EXPECT_EQ(occurrences(svg, "<polygon class=\"gap-band\" data-series=\"tuned\""), 2u) << svg;
  EXPECT_EQ(occurrences(svg, "class=\"gap-band\""), 2u);
}
