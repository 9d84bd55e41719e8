// Every HTML page (the report, the fleet page, the upgrade page) carries the base style once, from
// html_page, and adds only the rules of its own parts.
#include "report/html_page.h"

#include <gtest/gtest.h>

#include <string>

#include "fleet/fleet_output.h"
#include "report/report_html.h"
#include "report/upgrade_report.h"
#include "report_fixtures.h"
#include "test_files.h"
#include "upgrade/upgrade_comparison.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::occurrences;
using nccltune::test_support::read_report_profile;

namespace {

// The page's <style> element, whole.
std::string style_of(const std::string& html) {
  const std::size_t open = html.find("<style>");
  return open == std::string::npos ? "" : html.substr(open, html.find("</style>", open) - open);
}

UpgradeComparison an_upgrade() {
  UpgradeInput in;
  in.old_nccl = {"/opt/old/libnccl.so.2", "2.28.9"};
  in.new_nccl = {"/opt/new/libnccl.so.2", "2.29.1"};
  in.ops = {"all_reduce"};
  in.sizes = {8192};
  in.old_rounds = {{10}, {10}};
  in.new_rounds = {{8.8}, {8.8}};
  return compare_upgrade(in);
}

}  // namespace

TEST(HtmlPage, EveryPageHasTheBaseStyleOnceAndOnlyItsOwnRules) {
  ReportInput report;
  report.profile = read_report_profile("collectives/2n.yaml");
  auto survey = read_fleet_survey(fixture("fleet/survey-8n.json"));
  ASSERT_TRUE(survey) << survey.error();
  const std::string pages[] = {render_report_html(report), render_fleet_report_html(*survey, "f.json", "", "t"),
                               render_upgrade_report_html(an_upgrade(), "u.json", "", "t")};
  for (const std::string& page : pages) {
    const std::string style = style_of(page);
    EXPECT_EQ(occurrences(style, std::string(kBaseStyle)), 1u) << style;
    EXPECT_EQ(occurrences(style, "body {"), 1u) << style;
  }
  EXPECT_NE(style_of(pages[0]).find("table.overview td"), std::string::npos);
  EXPECT_EQ(style_of(pages[0]).find(".card"), std::string::npos);
  EXPECT_EQ(style_of(pages[1]), "<style>" + std::string(kBaseStyle));  // the fleet page adds nothing
  EXPECT_NE(style_of(pages[2]).find(".cards {"), std::string::npos);
  EXPECT_EQ(style_of(pages[2]).find("table.overview"), std::string::npos);
}
