// A profile whose per-size choices were confirmed through the tuner plugin (results.with_plugin):
// show, the report's cards and curves, and diff print what env + plugin gave next to the env
// alone, and a profile without it shows neither column nor card.
#include <gtest/gtest.h>

#include <string>

#include "profile/profile.h"
#include "report/profile_diff.h"
#include "report/profile_summary.h"
#include "report/profile_text.h"
#include "report/report_html.h"
#include "report_fixtures.h"
#include "test_files.h"

namespace nccltune {
namespace {

Profile confirmed_profile() {
  Result<Profile> profile = read_profile(test_support::fixture("profiles/with-plugin-2n.yaml"));
  EXPECT_TRUE(profile.ok()) << profile.error();
  return profile.ok() ? *profile : Profile{};
}

Profile without_plugin(Profile profile) {
  for (auto& [op, collective] : profile.collectives) collective.results.with_plugin.clear();
  profile.provenance.plugin_confirmation.clear();
  return profile;
}

TEST(WithPlugin, ShowPrintsBothCurvesAndTheConfirmation) {
  const Profile profile = confirmed_profile();
  ASSERT_FALSE(profile.collectives.at("all_reduce").results.with_plugin.empty());
  const std::string text = render_profile_summary(profile, "2n.yaml");
  EXPECT_NE(text.find("+plugin GB/s"), std::string::npos) << text;
  // all_reduce at 4M: NVLS/Simple through the plugin, 184.91 GB/s against 169.96 with the env alone.
  EXPECT_NE(text.find("184.91    1.088x"), std::string::npos) << text;
  EXPECT_NE(text.find("with the tuner plugin serving this profile"), std::string::npos) << text;
  EXPECT_NE(text.find("with the plugin: A/B 3 rounds in fresh workers"), std::string::npos) << text;
  const std::string plain = render_profile_summary(without_plugin(profile), "2n.yaml");
  EXPECT_EQ(plain.find("+plugin"), std::string::npos) << plain;
}

TEST(WithPlugin, TheReportDrawsTheCurveAndTheGainPerCollective) {
  ReportInput input;
  input.profile = confirmed_profile();
  const std::string html = render_report_html(input);
  EXPECT_NE(html.find("data-series=\"with-plugin\""), std::string::npos);
  // The overview's chain defaults -> env -> env + plugin, and a bar beside each env bar.
  const auto& results = input.profile.collectives.at("all_reduce").results;
  EXPECT_NE(html.find("\">" + format_speedup(results.with_plugin_speedup_geomean) + "</span></span>"),
            std::string::npos);
  EXPECT_EQ(test_support::occurrences(html, "class=\"bar with-plugin\""),
            test_support::occurrences(html, "class=\"bar\""));
  EXPECT_NE(html.find("with the tuner plugin</dt>"), std::string::npos);
  input.profile = without_plugin(input.profile);
  const std::string plain = render_report_html(input);
  EXPECT_EQ(plain.find("data-series=\"with-plugin\""), std::string::npos);
  EXPECT_EQ(plain.find("class=\"bar with-plugin\""), std::string::npos);
  EXPECT_NE(plain.find("&rarr; <span class=\"neutral\">not measured</span>"), std::string::npos);
}

TEST(WithPlugin, DiffSaysWhatThePluginGaveOnEachSide) {
  const Profile a = without_plugin(confirmed_profile());
  const Profile b = confirmed_profile();
  const ProfileDiff diff = diff_profiles(a, b);
  const std::string text = render_profile_diff(diff, a, "a.yaml", b, "b.yaml");
  EXPECT_NE(text.find("with the tuner plugin: not confirmed -> 1.0"), std::string::npos) << text;
}

}  // namespace
}  // namespace nccltune
