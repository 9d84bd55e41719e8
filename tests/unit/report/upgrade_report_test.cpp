// report --upgrade: the page of one NCCL upgrade check marks the regressions beyond the limit,
// names both libraries and the recommendation, and escapes what the JSON says.
#include <gtest/gtest.h>

#include <string>

#include "upgrade/upgrade_comparison.h"
#include "report/upgrade_report.h"

using namespace nccltune;

namespace {

std::size_t upgrade_count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

UpgradeComparison upgrade_page_input() {
  UpgradeInput in;
  in.old_nccl = {"/opt/<old>/libnccl.so.2", "2.28.9"};
  in.new_nccl = {"/opt/new/libnccl.so.2", "2.29.1"};
  in.ops = {"all_reduce", "all_reduce", "all_reduce", "all_gather"};
  in.sizes = {8192, 65536, 33554432, 8192};
  in.old_rounds = {{10, 10, 10, 10}, {10, 10, 10, 10}};
  in.new_rounds = {{8.8, 9.9, 10.6, 10}, {8.8, 9.9, 10.6, 10}};
  in.old_profile_rounds = {{11, 11, 11, 11}};
  in.new_profile_rounds = {{9.5, 10.6, 11, 10.6}};
  in.profile_path = "p.yaml";
  in.profile_nccl = "2.28";
  return compare_upgrade(in);
}

}  // namespace

TEST(UpgradeReport, MarksTheRegressionsBeyondTheLimitAndSaysWhatToDo) {
  const UpgradeComparison c = upgrade_page_input();
  const std::string html = render_upgrade_report_html(c, "u.json", "", "nccltune test");
  EXPECT_EQ(upgrade_count(html, "<tr class=\"regression\">"), 1u);  // 8K only: 64K is 1% (within 3%)
  EXPECT_NE(html.find("regression, beyond 3%"), std::string::npos);
  EXPECT_NE(html.find("NCCL upgrade check: 2.28.9 to 2.29.1"), std::string::npos);
  EXPECT_NE(html.find("id=\"op-all_reduce\""), std::string::npos);
  EXPECT_NE(html.find("id=\"op-all_gather\""), std::string::npos);
  EXPECT_NE(html.find("extend env.nccl_compatible to 2.29: the 2.28 profile gains +"), std::string::npos);
  EXPECT_NE(html.find("/opt/&lt;old&gt;/libnccl.so.2"), std::string::npos);
  EXPECT_EQ(html.find("<old>"), std::string::npos);
  const std::string passed = render_upgrade_report_html(compare_upgrade([] {
    UpgradeInput in;
    in.old_nccl = {"a", "2.28.9"};
    in.new_nccl = {"b", "2.28.9"};
    in.ops = {"all_reduce"};
    in.sizes = {8192};
    in.old_rounds = in.new_rounds = {{10}};
    return in;
  }()), "u.json", "", "nccltune test");
  EXPECT_EQ(upgrade_count(passed, "<tr class=\"regression\">"), 0u);
  EXPECT_NE(passed.find("no regression"), std::string::npos);
}

// The ratio chart is NEW over OLD, not a speedup over NCCL's defaults: its axis says so.
TEST(UpgradeReport, TheRatioChartIsLabelledNewOverOld) {
  const std::string html = render_upgrade_report_html(upgrade_page_input(), "u.json", "", "nccltune test");
  EXPECT_NE(html.find(">NEW / OLD busbw (linear)</text>"), std::string::npos);
  EXPECT_EQ(html.find("speedup over the defaults"), std::string::npos);
}
