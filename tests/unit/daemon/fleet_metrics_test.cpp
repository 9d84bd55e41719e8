// The fleet survey's verdict for this node as metrics (daemon.fleet_survey): a suspect node, a
// node in a suspect link, a failed node, a node the survey does not name, and a survey that cannot
// be read, on the 8-node fixture (n3 slow with every partner, n1-n5 slow only together, n6 hung).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "base/atomic_file.h"
#include "daemon/metrics_textfile.h"
#include "fleet/fleet_output.h"
#include "metric_samples.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::metric_samples;

namespace {

constexpr double kModified = 1795964168.5;

FleetSurvey survey_8n() {
  const std::string file = fixture("fleet/survey-8n.json").string();
  auto text = read_text_file(file, std::size_t{1} << 20);
  EXPECT_TRUE(text) << text.error();
  auto survey = parse_fleet_json(text ? *text : "", file);
  EXPECT_TRUE(survey) << survey.error();
  return survey ? *survey : FleetSurvey{};
}

std::map<std::string, std::string> metrics_for(const std::string& host) {
  const FleetSurvey survey = survey_8n();
  return metric_samples(render_fleet_metrics(&survey, fleet_node_names(host), kModified));
}

std::size_t count_prefix(const std::map<std::string, std::string>& s, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& [name, value] : s) n += name.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace

TEST(FleetMetrics, ASuspectNodeByItsShortName) {
  const auto s = metrics_for("n3.cluster.example.org");
  EXPECT_EQ(s.at("nccltune_fleet_survey_error"), "0");
  EXPECT_EQ(s.at("nccltune_fleet_survey_timestamp_seconds"), "1795964168.5");
  EXPECT_EQ(s.at("nccltune_fleet_node_status{status=\"suspect\"}"), "1");
  EXPECT_EQ(count_prefix(s, "nccltune_fleet_node_status"), 1u) << "one status line";
  EXPECT_EQ(s.at("nccltune_fleet_suspect_links"), "0");
  EXPECT_EQ(s.at("nccltune_fleet_local_busbw_bytes_per_second"), "22000000000");
  EXPECT_EQ(count_prefix(s, "nccltune_fleet_pair_busbw_bytes_per_second{"), 6u) << "every partner but n6";
  EXPECT_EQ(s.count("nccltune_fleet_pair_busbw_bytes_per_second{partner=\"n6\"}"), 0u);
}

TEST(FleetMetrics, ANodeOfASuspectLinkPassesAndCountsTheLink) {
  const auto s = metrics_for("n5");
  EXPECT_EQ(s.at("nccltune_fleet_node_status{status=\"pass\"}"), "1");
  EXPECT_EQ(s.at("nccltune_fleet_suspect_links"), "1");
  EXPECT_EQ(s.at("nccltune_fleet_pair_busbw_bytes_per_second{partner=\"n1\"}"), "19500000000");
}

TEST(FleetMetrics, AFailedNodeHasNoBusbw) {
  const auto s = metrics_for("n6");
  EXPECT_EQ(s.at("nccltune_fleet_node_status{status=\"failed\"}"), "1");
  EXPECT_EQ(s.at("nccltune_fleet_suspect_links"), "0");
  EXPECT_EQ(s.count("nccltune_fleet_local_busbw_bytes_per_second"), 0u);
  EXPECT_EQ(count_prefix(s, "nccltune_fleet_pair_busbw_bytes_per_second"), 0u);
}

TEST(FleetMetrics, ANodeTheSurveyDoesNotNameIsAbsent) {
  // "n3x" and a name that only shares a prefix with one in the survey match nothing.
  for (const std::string host : {"gpu-b07.cluster", "n3x", "n"}) {
    const auto s = metrics_for(host);
    EXPECT_EQ(s.at("nccltune_fleet_node_status{status=\"absent\"}"), "1") << host;
    EXPECT_EQ(s.at("nccltune_fleet_survey_error"), "0");
    EXPECT_EQ(s.count("nccltune_fleet_suspect_links"), 0u);
    EXPECT_EQ(count_prefix(s, "nccltune_fleet_pair_busbw_bytes_per_second"), 0u);
  }
}

TEST(FleetMetrics, TheFullHostNameMatchesWhenTheSurveyUsesIt) {
  FleetSurvey survey;
  survey.local = {{"gpu-a01.example", 40.5, 20.0, std::nullopt, "pass"}};
  const auto s = metric_samples(render_fleet_metrics(&survey, fleet_node_names("gpu-a01.example"), 0));
  EXPECT_EQ(s.at("nccltune_fleet_node_status{status=\"pass\"}"), "1");
  EXPECT_EQ(s.at("nccltune_fleet_local_busbw_bytes_per_second"), "40500000000");
  EXPECT_EQ(fleet_node_names("a.b.c"), (std::vector<std::string>{"a.b.c", "a"}));
  EXPECT_EQ(fleet_node_names("a"), (std::vector<std::string>{"a"}));
}

TEST(FleetMetrics, AMalformedSurveyIsOneErrorMetricAndAnErrorNamingTheFile) {
  const auto parsed =
      parse_fleet_json(R"({"schema":"nccltune/fleet/v1","nodes":"eight"})", "/shared/fleet.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().find("/shared/fleet.json"), std::string::npos) << parsed.error();
  EXPECT_EQ(parsed.error().find('\n'), std::string::npos) << parsed.error();
  const std::string text = render_fleet_metrics(nullptr, {"n3"}, 0);
  EXPECT_EQ(
      text,
      "# HELP nccltune_fleet_survey_error 1 when daemon.fleet_survey is missing, unreadable or malformed "
      "(the journal says why), else 0.\n"
      "# TYPE nccltune_fleet_survey_error gauge\n"
      "nccltune_fleet_survey_error 1\n");
}

TEST(FleetMetrics, HelpAndTypeBeforeEverySampleAndLabelsEscaped) {
  FleetSurvey survey = survey_8n();
  survey.pairs.push_back({{"n3", "evil\"\\\nname"}, 8, 1.5, "slow"});
  const std::string text = render_fleet_metrics(&survey, {"n3"}, kModified);
  EXPECT_NE(text.find(R"(partner="evil\"\\\nname")"), std::string::npos) << text;
  std::istringstream in(text);
  std::string last_typed;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) last_typed = line.substr(7, line.find(' ', 7) - 7);
    if (line.empty() || line[0] == '#') continue;
    EXPECT_EQ(line.rfind(last_typed, 0), 0u) << line << " follows the TYPE of " << last_typed;
  }
}
