// nccltuned's watch of NCCL Inspector's Prometheus textfiles: the rows it exports per shape,
// collective and size bucket, their textfile lines, and the drift of a row that stays low.
#include "daemon/inspector_watch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/observed_drift.h"
#include "metric_samples.h"
#include "observe/inspector_files.h"
#include "profile/profile.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::metric_samples;

namespace {

ObserveReport watched_fixture_report(const Profile* profile) {
  const InspectorFiles files = find_inspector_files({fixture("inspector/prom-2n2g").string()});
  ObserveAccumulator accumulator;
  read_inspector_prom_files(files.prom_files, accumulator);
  return build_observe_report(accumulator.finish(), {"prom-2n2g"}, profile, "", kDefaultObserveTolerance);
}

WatchedRow watched(const std::string& shape, std::optional<double> ratio, double unmeasured = 0) {
  return {shape, "all_reduce", 1 << 20, (2 << 20) - 1, ratio, unmeasured};
}

TEST(InspectorWatch, RowsPerShapeCollectiveAndSize) {
  auto profile = read_profile(fixture("profiles/with-plugin-2n.yaml"));
  ASSERT_TRUE(profile.ok()) << profile.error();
  const std::vector<WatchedRow> rows = watched_rows(watched_fixture_report(&*profile));
  // world: all_gather and all_reduce at 1-2MB; the two rails fold into one row, the two nodes too.
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].shape, "node");
  EXPECT_FALSE(rows[0].ratio.has_value());
  EXPECT_EQ(rows[1].shape, "rail");
  EXPECT_EQ(rows[1].min_bytes, 4u << 20);
  EXPECT_EQ(rows[1].max_bytes, (8u << 20) - 1);
  EXPECT_FALSE(rows[1].ratio.has_value());
  // Both rails' time: a rail's AllReduce takes 200 us of each GPU's 295 us (the textfiles' means).
  EXPECT_NEAR(rows[1].unmeasured_time_share, 200.0 / 295.0, 1e-9);
  EXPECT_EQ(rows[2].shape, "world");
  EXPECT_EQ(rows[2].collective, "all_gather");
  ASSERT_TRUE(rows[2].ratio.has_value());
  EXPECT_NEAR(*rows[2].ratio, 0.92, 0.02);
  EXPECT_EQ(rows[3].collective, "all_reduce");
  EXPECT_NEAR(*rows[3].ratio, 0.99, 0.02);
  EXPECT_EQ(rows[3].unmeasured_time_share, 0);
}

TEST(InspectorWatch, TheLowestCommunicatorOfAShapeIsItsRatio) {
  ObserveReport report;
  for (double ratio : {0.95, 0.6, 0.9}) {
    ObserveCommunicatorReport rail;
    rail.shape = "rail";
    ObserveRow row;
    row.collective = "all_reduce";
    row.min_bytes = 1 << 20;
    row.max_bytes = (2 << 20) - 1;
    row.ratio = ratio;
    rail.rows.push_back(row);
    report.communicators.push_back(rail);
  }
  const auto rows = watched_rows(report);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].ratio, 0.6);
}

TEST(InspectorWatch, TextfileLinesAndEscapedLabels) {
  InspectorWatch watch;
  watch.files = 4;
  watch.problems = 1;
  watch.profile = true;
  watch.rows = {watched("world", 0.5), watched("rail", std::nullopt, 0.25)};
  watch.rows[1].collective = "odd\"name\\";
  const auto samples = metric_samples(render_inspector_metrics(watch));
  EXPECT_EQ(samples.at("nccltune_inspector_files"), "4");
  EXPECT_EQ(samples.at("nccltune_inspector_problems"), "1");
  EXPECT_EQ(samples.at("nccltune_inspector_profile_found"), "1");
  EXPECT_EQ(
      samples.at(
          "nccltune_observed_busbw_ratio{shape=\"world\",collective=\"all_reduce\",min_bytes=\"1048576\","
          "max_bytes=\"2097151\"}"),
      "0.5");
  EXPECT_EQ(
      samples.at("nccltune_observed_unmeasured_time_share{shape=\"rail\",collective=\"odd\\\"name\\\\\","
                 "min_bytes=\"1048576\",max_bytes=\"2097151\"}"),
      "0.25");
  EXPECT_EQ(samples.size(), 5u);  // no ratio for the unmeasured row, no share for the measured one
  const std::string text = render_inspector_metrics(watch);
  EXPECT_NE(text.find("# TYPE nccltune_observed_busbw_ratio gauge\n"), std::string::npos);
}

TEST(ObservedDrift, ARowBelowForNIntervalsIsDriftOnce) {
  ObservedDrift drift;
  const std::vector<WatchedRow> low = {watched("rail", 0.7), watched("world", 0.95)};
  EXPECT_TRUE(drift.update(low, 0.9, 3).empty());
  EXPECT_TRUE(drift.update(low, 0.9, 3).empty());
  const auto third = drift.update(low, 0.9, 3);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].kind, "observed_below_tuned");
  EXPECT_EQ(third[0].subject, "rail all_reduce 1048576-2097151 bytes");
  EXPECT_NE(third[0].message.find("70% of the profile's busbw for 3 intervals"), std::string::npos)
      << third[0].message;
  EXPECT_TRUE(drift.update(low, 0.9, 3).empty());  // reported once
}

TEST(ObservedDrift, RecoveryOrAnIntervalWithoutTheRowStartsAgain) {
  ObservedDrift drift;
  const std::vector<WatchedRow> low = {watched("rail", 0.7)};
  drift.update(low, 0.9, 2);
  drift.update({watched("rail", 0.93)}, 0.9, 2);  // recovered
  EXPECT_TRUE(drift.update(low, 0.9, 2).empty());
  drift.update({}, 0.9, 2);  // no job ran it
  EXPECT_TRUE(drift.update(low, 0.9, 2).empty());
  EXPECT_EQ(drift.update(low, 0.9, 2).size(), 1u);
  // Unmeasured rows have no ratio and are never drift.
  ObservedDrift unmeasured;
  EXPECT_TRUE(unmeasured.update({watched("node", std::nullopt, 0.5)}, 0.9, 1).empty());
}

}  // namespace
