// report --observed: the page of an observed job alone says there is no profile and stays
// self-contained; the section draws the time per communicator shape with the unmeasured part
// marked, a ratio chart per collective with the 1.0 line and the tolerance band, every row's
// verdict, the straggler's lead and the suspects, with every name from the file escaped; in a
// profile's report it follows the profile's own sections.
#include "report/observed_section.h"

#include <gtest/gtest.h>

#include <string>

#include "report/report_html.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::occurrences;
using nccltune::test_support::read_report_profile;

namespace {

Observation read_observed_fixture(const std::string& name) {
  auto o = read_observation_json(fixture("report/observed/" + name));
  EXPECT_TRUE(o) << o.error();
  return o ? *o : Observation{};
}

std::string observed_page(const std::string& name) {
  return render_observed_report_html(read_observed_fixture(name), "out/" + name, "", "nccltune test");
}

}  // namespace

TEST(ObservedSection, SharesTheJobsTimeByShapeAndMarksTheUnmeasured) {
  const std::array<ShapeTimeShare, 4> shares = shape_time_shares(read_observed_fixture("job-2n2g.json"));
  EXPECT_EQ(shares[0].shape, "world");
  EXPECT_NEAR(shares[0].share, 0.6081, 1e-4);  // all_gather 40.5% + all_reduce 20.3%
  EXPECT_EQ(shares[0].unmeasured, 0);
  EXPECT_EQ(shares[0].communicators, 1);
  EXPECT_EQ(shares[1].shape, "rail");
  EXPECT_NEAR(shares[1].share, 0.3378, 1e-4);
  EXPECT_DOUBLE_EQ(shares[1].unmeasured, shares[1].share);  // no rail section in the profile
  EXPECT_EQ(shares[1].communicators, 2);
  EXPECT_EQ(shares[2].shape, "node");
  EXPECT_DOUBLE_EQ(shares[2].unmeasured, shares[2].share);
  EXPECT_EQ(shares[3].shape, "other");
  EXPECT_EQ(shares[3].communicators, 0);
}

TEST(ObservedSection, AStragglersLeadIsPerCollectiveItWasLastIn) {
  ObservationStraggler s;
  s.last_share = 0.5;
  s.cost_us = 600;
  EXPECT_DOUBLE_EQ(straggler_lead_us(s, 24), 50);  // last in 12 of 24
  EXPECT_DOUBLE_EQ(straggler_lead_us(s, 0), 0);    // the file does not say how many matched
  // observe counts a straggler over all its communicators and says how many it was last in: that
  // count, not the shown communicator's.
  s.last = 48;
  EXPECT_DOUBLE_EQ(straggler_lead_us(s, 24), 12.5);
}

TEST(ObservedSection, ThePageAloneSaysThereIsNoProfileAndIsSelfContained) {
  const std::string html = observed_page("job-2n2g.json");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<h1>NCCL observed job</h1>"), std::string::npos);
  EXPECT_NE(html.find("The observed job alone: no profile given to the report"), std::string::npos);
  EXPECT_NE(html.find("observed out/job-2n2g.json"), std::string::npos);
  for (const char* banned : {"<script", "<link", "<iframe", "<img", "@import", "url(", "src=", "href="})
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  EXPECT_EQ(occurrences(html, "<section id=\"observed\">"), 1u);
  EXPECT_NE(html.find("192 records of 4 ranks on 2 hosts, 5 communicators; Inspector v4.0; profile: "
                      "tests/fixtures/profiles/with-plugin-2n.yaml"),
            std::string::npos);
}

TEST(ObservedSection, DrawsABarPerShapeWithTheUnmeasuredPartMarked) {
  const std::string html = observed_page("job-2n2g.json");
  EXPECT_EQ(occurrences(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart shape-shares\""), 1u);
  EXPECT_EQ(occurrences(html, "class=\"share measured\""), 1u);  // the world
  EXPECT_NE(html.find("class=\"share measured\" data-shape=\"world\""), std::string::npos);
  EXPECT_NE(html.find("class=\"share unmeasured\" data-shape=\"rail\""), std::string::npos);
  EXPECT_NE(html.find("class=\"share unmeasured\" data-shape=\"node\""), std::string::npos);
  EXPECT_NE(html.find("60.8% of the time, 1 communicator<"), std::string::npos);
  EXPECT_NE(html.find("33.8% of the time, 2 communicators, 33.8% unmeasured<"), std::string::npos);
  EXPECT_NE(html.find(">no communicator<"), std::string::npos);  // other
  EXPECT_NE(html.find("the profile has no section for rail, node communicators"), std::string::npos);
}

TEST(ObservedSection, DrawsTheRatioPerSizeOfEachCollectiveAgainstTheToleranceBand) {
  const std::string html = observed_page("job-2n2g.json");
  // all_gather and all_reduce of the world: the only rows with a tuned busbw.
  EXPECT_NE(html.find("<title>all_gather: observed / tuned busbw per size</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>all_reduce: observed / tuned busbw per size</title>"), std::string::npos);
  EXPECT_EQ(occurrences(html, "class=\"gap-band\" data-series=\"as-tuned\""), 2u);
  EXPECT_EQ(occurrences(html, "data-series=\"communicator-1\""), 2u);
  EXPECT_EQ(html.find("data-series=\"communicator-2\""), std::string::npos);  // the rails have no ratio
  EXPECT_NE(html.find("tolerance (0.90: below it, below tuned)"), std::string::npos);
  EXPECT_NE(html.find("world (world, 4 ranks): 1482910 B, 0.7129 GB/s"), std::string::npos)
      << "the bucket [1M, 2M) drawn at its geometric middle";
  // A file that names its tolerance is drawn with it.
  EXPECT_NE(observed_page("newer-fields.json").find("tolerance (0.95: below it, below tuned)"),
            std::string::npos);
}

TEST(ObservedSection, ListsEveryRowWithItsVerdictAndTheTuneLineOfTheUnmeasured) {
  const std::string html = observed_page("job-2n2g.json");
  EXPECT_NE(
      html.find("1 as_tuned</span> &middot; <span class=\"bad\">1 below_tuned</span> &middot; "
                "<span class=\"bad\">0 not_served</span> &middot; <span class=\"neutral\">4 unmeasured"),
      std::string::npos);
  const std::size_t table = html.find("<table class=\"verdicts\">");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = html.substr(table, html.find("</table>", table) - table);
  EXPECT_EQ(occurrences(rows, "<tr"), 7u);  // the header and 6 rows
  EXPECT_EQ(occurrences(rows, "<tr class=\"unmeasured\">"), 4u);
  EXPECT_NE(rows.find("<td class=\"bad\">below tuned (0.71)</td>"), std::string::npos);
  EXPECT_NE(rows.find("<td class=\"good\">as tuned</td>"), std::string::npos);
  EXPECT_EQ(occurrences(rows, "<code>nccltune tune --comms world,rail --ops all_reduce</code>"), 2u);
  EXPECT_EQ(occurrences(rows, "<code>nccltune tune --comms world,node --ops all_reduce</code>"), 2u);
  EXPECT_NE(rows.find("<td>[1M, 2M)</td>"), std::string::npos);
  EXPECT_NE(html.find("(observe's default tolerance)"), std::string::npos);
}

TEST(ObservedSection, NamesTheStragglerWithItsLead) {
  const std::string html = observed_page("straggler.json");
  const std::size_t table = html.find("<table class=\"stragglers\">");
  ASSERT_NE(table, std::string::npos);
  // Last in all 12 matched collectives of the world, 384 us in all: 32 us each.
  EXPECT_NE(html.find("<tr><td class=\"num\">3</td><td>node-b</td><td>?</td>"
                      "<td>0x5eed000000beef (world, 4 ranks)</td><td class=\"num\">100.0%</td>"
                      "<td class=\"num\">32 us</td><td class=\"num bad\">384 us</td></tr>",
                      table),
            std::string::npos);
  EXPECT_NE(observed_page("job-2n2g.json").find("None: no rank arrived last"), std::string::npos);
}

TEST(ObservedSection, DrawsWhatANewerObserveAddsAndEscapesTheFilesNames) {
  const std::string html = observed_page("newer-fields.json");
  EXPECT_NE(html.find("<td>Tree/LL</td><td>Ring/LL128</td><td class=\"bad\">not served</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"bad\">node-&lt;x&gt;</td><td>its rail communicators at 0.55 of tuned"),
            std::string::npos);
  EXPECT_NE(html.find("world &lt;b&gt;&amp;&lt;/b&gt; (world, 4 ranks)"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("node-<x>"), std::string::npos);
  EXPECT_NE(html.find("<td>GPU1</td>"), std::string::npos);
  // Without the count of matched collectives the lead per collective is not made up.
  EXPECT_NE(observed_page("minimal.json").find("<h3>Stragglers</h3>"), std::string::npos);
}

// More communicators than a legend holds: the largest time shares are drawn, the rest counted.
TEST(ObservedSection, DrawsTheLargestCommunicatorsAndCountsTheRest) {
  Observation o = read_observed_fixture("job-2n2g.json");
  const ObservationCommunicator world = o.communicators[0];
  o.communicators.clear();
  for (int i = 0; i < 10; ++i) {
    ObservationCommunicator c = world;
    c.id = "0x" + std::to_string(i);
    c.name = "world " + std::to_string(i);
    c.rows.resize(1);  // all_gather
    c.rows[0].time_share = 0.01 * (i + 1);
    o.communicators.push_back(c);
  }
  const std::string html = render_observed_report_html(o, "o.json", "", "nccltune test");
  EXPECT_NE(html.find("data-series=\"communicator-8\""), std::string::npos);
  EXPECT_EQ(html.find("data-series=\"communicator-9\""), std::string::npos);
  EXPECT_NE(html.find("2 more communicators of all_gather in the table below."), std::string::npos);
  EXPECT_NE(html.find(">world 9 (world, 4 ranks)"), std::string::npos) << "the largest share drawn";
  EXPECT_EQ(html.find("world 0 (world, 4 ranks): "), std::string::npos) << "the smallest left to the table";
}

TEST(ObservedSection, FollowsTheProfilesSectionsInItsReport) {
  ReportInput in;
  in.profile = read_report_profile("keep-defaults-2n.yaml");
  in.profile_source = "2n.yaml";
  in.generated_by = "nccltune test";
  const std::string without = render_report_html(in);
  EXPECT_EQ(without.find("<section id=\"observed\">"), std::string::npos);
  in.observed = read_observed_fixture("straggler.json");
  in.observed_source = "obs.json";
  const std::string html = render_report_html(in);
  const std::size_t observed = html.find("<section id=\"observed\">");
  ASSERT_NE(observed, std::string::npos);
  EXPECT_LT(html.find("<section id=\"failed\">"), observed);
  EXPECT_NE(html.find("<code>obs.json</code>", observed), std::string::npos);
  EXPECT_EQ(html.find("The observed job alone"), std::string::npos);
}

// Shares of one whole: a file whose shares add up to more is still drawn within the bar.
TEST(ObservedSection, SharesThatAddUpToMoreStayWithinTheBar) {
  Observation o = read_observed_fixture("job-2n2g.json");
  for (ObservationCommunicator& c : o.communicators)
    for (ObservationRow& row : c.rows) row.time_share = 0.9;
  const std::string html = render_observed_report_html(o, "o.json", "", "nccltune test");
  for (const char* shape : {"world", "rail"}) {
    const std::string rect = std::string("data-shape=\"") + shape + "\" x=\"";
    for (std::size_t at = html.find(rect); at != std::string::npos; at = html.find(rect, at + 1)) {
      const double x = std::stod(html.substr(at + rect.size()));
      const std::size_t width_at = html.find("width=\"", at) + 7;
      const double width = std::stod(html.substr(width_at));
      EXPECT_LE(x + width, 70 + 640 + 1e-6) << shape;
    }
  }
}
