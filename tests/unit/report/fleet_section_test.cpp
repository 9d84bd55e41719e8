// The fleet survey in the report: one heat map cell per node pair and one per node, the suspect
// node, the suspect link and the failed node marked, hostile names escaped, a page of its own that
// is self-contained, and a survey that cannot be read as one error line naming the file.
#include "report/fleet_section.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "fleet/fleet_output.h"
#include "report/report_html.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::occurrences;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

FleetSurvey survey_8n() {
  auto survey = read_fleet_survey(fixture("fleet/survey-8n.json"));
  EXPECT_TRUE(survey) << survey.error();
  return survey ? *survey : FleetSurvey{};
}

// The fill of the heat map cell with this class and data attribute, or "".
std::string fill_of(const std::string& html, const std::string& cls, const std::string& data) {
  const std::regex cell("<rect class=\"" + cls + "\" " + data + " [^>]* fill=\"(#[0-9a-f]{6})\"");
  std::smatch m;
  return std::regex_search(html, m, cell) ? m[1].str() : "";
}

}  // namespace

TEST(FleetSection, OneCellPerNodePairAndPerNode) {
  const std::string html = render_fleet_section(survey_8n(), "fleet.json");
  EXPECT_EQ(occurrences(html, "<rect class=\"pair\""), 28u) << "8 nodes: 28 pairs";
  EXPECT_EQ(occurrences(html, "<rect class=\"local\""), 8u);
  for (const char* pair : {"n0 n1", "n6 n7", "n1 n5", "n3 n7"})
    EXPECT_EQ(occurrences(html, "data-nodes=\"" + std::string(pair) + "\""), 1u) << pair;
  // Healthy pairs near the median are green, the link at half of it red, n6's pairs unmeasured.
  EXPECT_EQ(fill_of(html, "pair", "data-nodes=\"n0 n7\""), "#16a34a");
  EXPECT_EQ(fill_of(html, "pair", "data-nodes=\"n1 n5\""), "#dc2626");
  EXPECT_EQ(fill_of(html, "pair", "data-nodes=\"n0 n6\""), "#e5e7eb");
  EXPECT_NE(fill_of(html, "pair", "data-nodes=\"n0 n3\""), "#16a34a");
  EXPECT_NE(html.find("n0 and n3 (round"), std::string::npos) << "a tooltip with the round";
}

TEST(FleetSection, MarksTheSuspectTheLinkAndTheFailedNode) {
  const std::string html = render_fleet_section(survey_8n(), "fleet.json");
  EXPECT_EQ(occurrences(html, "class=\"suspect-node\""), 1u);
  EXPECT_EQ(occurrences(html, "class=\"node-label suspect\""), 2u)
      << "n3 left of its row and beside its diagonal";
  EXPECT_NE(html.find(">n3 \u25b2</text>"), std::string::npos);
  EXPECT_EQ(occurrences(html, "class=\"suspect-link\""), 1u);
  // The link's outline sits on the n1-n5 cell.
  const std::regex cell(R"re(<rect class="pair" data-nodes="n1 n5" x="(\d+)" y="(\d+)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, cell));
  const int x = std::stoi(m[1]), y = std::stoi(m[2]);
  EXPECT_NE(html.find("<rect class=\"suspect-link\" x=\"" + std::to_string(x + 1) + "\" y=\"" +
                      std::to_string(y + 1) + "\""),
            std::string::npos);
  EXPECT_EQ(occurrences(html, "class=\"node-label failed\""), 2u);
  EXPECT_EQ(fill_of(html, "local", "data-node=\"n6\""), "#6b7280");
  EXPECT_GE(occurrences(html, "class=\"failed-cross\""), 1u);
  // The tables, with the evidence.
  EXPECT_NE(html.find("6 of 6 pairs at 60-63% of median"), std::string::npos);
  EXPECT_NE(html.find("slow only together"), std::string::npos);
  EXPECT_NE(html.find("no progress in 60 s"), std::string::npos);
}

TEST(FleetSection, HostileNamesAreEscaped) {
  FleetSurvey survey = survey_8n();
  const std::string hostile = "<script>alert(\"x\")</script>";
  survey.local[3].node = hostile;
  survey.suspects[0].node = hostile;
  survey.suspects[0].evidence = "<img src=x onerror=alert(1)>";
  survey.pairs.push_back({{hostile, "n0"}, 8, 40.0, "pass"});
  survey.failed[0].reason = "a & b";
  const std::string html = render_fleet_section(survey, "<b>fleet.json</b>");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a &amp; b"), std::string::npos);
}

TEST(FleetSection, APageOfItsOwnAndASectionOfAProfileReport) {
  const std::string page =
      render_fleet_report_html(survey_8n(), "/shared/fleet.json", "before the tune", "nccltune t");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<h1>NCCL fleet survey</h1>"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"fleet\">"), std::string::npos);
  EXPECT_NE(page.find("before the tune"), std::string::npos);
  EXPECT_FALSE(
      std::regex_search(page, std::regex(R"(<script|<link|@import|url\(|src=|href=)", std::regex::icase)));
  ReportInput input;
  input.fleet = survey_8n();
  input.fleet_source = "fleet.json";
  EXPECT_NE(render_report_html(input).find("<section id=\"fleet\">"), std::string::npos);
  input.fleet.reset();
  EXPECT_EQ(render_report_html(input).find("<section id=\"fleet\">"), std::string::npos);
}

TEST(FleetSection, ManyNodesDrawOnlyTheMeasuredPairs) {
  FleetSurvey survey;
  survey.nodes = 100;
  for (int i = 0; i < 100; ++i)
    survey.local.push_back({"node" + std::to_string(i), 40.0, 20.0, std::nullopt, "pass"});
  for (int i = 0; i < 100; i += 2)
    survey.pairs.push_back({{"node" + std::to_string(i), "node" + std::to_string(i + 1)}, 1, 80.0, "pass"});
  const std::string html = render_fleet_section(survey, "big.json");
  EXPECT_EQ(occurrences(html, "<rect class=\"pair\""), 50u);
  EXPECT_EQ(occurrences(html, "<rect class=\"local\""), 100u);
  EXPECT_EQ(occurrences(html, "class=\"node-label"), 0u) << "too small for names: the tables have them";
}

TEST(FleetSection, ASurveyThatCannotBeReadIsOneLineNamingTheFile) {
  TempDir dir;
  const auto bad = dir / "fleet.json";
  write_file(bad, "{\"schema\": \"nccltune/fleet/v1\", \"nodes\": ");
  auto survey = read_fleet_survey(bad);
  ASSERT_FALSE(survey);
  EXPECT_NE(survey.error().find(bad.string()), std::string::npos) << survey.error();
  EXPECT_EQ(survey.error().find('\n'), std::string::npos) << survey.error();
  const auto missing = read_fleet_survey(dir / "missing.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("missing.json"), std::string::npos) << missing.error();
}

// Each measured cell shows its share of the median as a number, so a screenshot has the numbers
// the tooltips give; the slow n1-n5 link's, white on its red. Unmeasured and failed cells have none.
TEST(FleetSection, EachCellShowsItsShareOfTheMedian) {
  const std::string html = render_fleet_section(survey_8n(), "fleet.json");
  const std::regex number(
      R"re(<text class="cell-number" x="(\d+)" y="[0-9.]+" text-anchor="middle" font-size="(\d+)" font-weight="600" fill="(#[0-9a-f]{6})" pointer-events="none">(\d+)</text>)re");
  std::size_t numbers = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), number); it != std::sregex_iterator(); ++it) {
    ++numbers;
    EXPECT_GE(std::stoi((*it)[2].str()), 9) << "readable: 9 px or more";
  }
  // 8 nodes: 28 pairs and 8 nodes alone, less what was not measured or failed.
  EXPECT_GE(numbers, 20u);
  EXPECT_LT(numbers, 36u);
  const std::size_t cell = html.find("data-nodes=\"n1 n5\"");
  ASSERT_NE(cell, std::string::npos);
  const std::size_t text = html.find("<text class=\"cell-number\"", cell);
  ASSERT_NE(text, std::string::npos);
  std::smatch m;
  const std::string after = html.substr(text, 300);
  ASSERT_TRUE(std::regex_search(after, m, number)) << after;
  EXPECT_EQ(m[3].str(), "#ffffff") << "white on the red of the slow link";
  EXPECT_LE(std::stoi(m[4].str()), 50) << "the slow link at half the median or less";
  EXPECT_NE(html.find("(the number in each cell)"), std::string::npos) << "the legend says what it is";
  EXPECT_NE(html.find("Each cell holds that share in percent"), std::string::npos);
}

// Past 40 nodes a cell is too small for three legible digits: no numbers, the tooltips stay.
TEST(FleetSection, NoNumbersInCellsTooSmallToReadThem) {
  FleetSurvey survey = survey_8n();
  for (int i = 0; i < 50; ++i) {
    LocalResult local;
    local.node = "x" + std::to_string(i);
    local.busbw_gbps = 22.0;
    survey.local.push_back(local);
  }
  const std::string html = render_fleet_section(survey, "fleet.json");
  EXPECT_EQ(occurrences(html, "class=\"cell-number\""), 0u);
  EXPECT_EQ(html.find("(the number in each cell)"), std::string::npos);
  EXPECT_NE(html.find("Hover a cell for its numbers"), std::string::npos);
}
