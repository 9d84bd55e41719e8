// The observed job against its profile (tests/fixtures/inspector/README.md), the stragglers, the
// exit codes and the nccltune/observe/v1 JSON.
#include "observe/observe_report.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "observe/inspector_files.h"
#include "observe/observe_output.h"
#include "profile/profile.h"

namespace nccltune {
namespace {

const std::string kFixtures = NCCLTUNE_FIXTURES;

ObservedJob read_job(const std::string& name) {
  const InspectorFiles files = find_inspector_files({kFixtures + "/inspector/" + name});
  ObserveAccumulator accumulator;
  read_inspector_files(files.files, accumulator);
  return accumulator.finish();
}

Profile two_node_profile() {
  auto profile = read_profile(kFixtures + "/profiles/with-plugin-2n.yaml");
  EXPECT_TRUE(profile.ok()) << profile.error();
  return *profile;
}

ObserveReport report_of(const std::string& name, const Profile* profile) {
  return build_observe_report(read_job(name), {name}, profile, profile ? "with-plugin-2n.yaml" : "",
                              kDefaultObserveTolerance);
}

const ObserveCommunicatorReport& communicator(const ObserveReport& report, const std::string& id) {
  for (const auto& c : report.communicators)
    if (c.id == id) return c;
  throw std::runtime_error("no communicator " + id);
}

const ObserveRow& row(const ObserveCommunicatorReport& c, const std::string& collective) {
  for (const auto& r : c.rows)
    if (r.collective == collective) return r;
  throw std::runtime_error("no row " + collective);
}

TEST(ObserveReport, ShapesInNcclsTerms) {
  const Profile profile = two_node_profile();
  const ObserveReport report = report_of("job-2n2g", &profile);
  EXPECT_EQ(report.context.ranks, 4);
  ASSERT_EQ(report.communicators.size(), 5u);
  EXPECT_EQ(report.communicators.front().id, "0x1a2b3c4d5e6f70");  // the world first
  EXPECT_EQ(communicator(report, "0x1a2b3c4d5e6f70").shape, "world");
  EXPECT_EQ(communicator(report, "0x1a2b3c4d5e6f70").section, "world (2 nodes x 2)");
  EXPECT_EQ(communicator(report, "0xb0000000000001").shape, "rail");
  EXPECT_EQ(communicator(report, "0xc000000000000a").shape, "node");
  EXPECT_EQ(communicator(report, "0xc000000000000a").hosts, std::vector<std::string>{"node-a"});
}

TEST(ObserveReport, OnAnMnnvlRackARailAndANodeAreOneNcclShape) {
  // 16 ranks on 4 hosts of one NVLink domain: NCCL's nnodes is 1 for every communicator.
  ObserveAccumulator accumulator;
  const auto line = [](const std::string& id, int rank, int n_ranks, int host, std::uint64_t sn) {
    return "{\"header\":{\"id\":\"" + id + "\",\"rank\":" + std::to_string(rank) +
           ",\"n_ranks\":" + std::to_string(n_ranks) +
           ",\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\","
           "\"hostname\":\"tray-" +
           std::to_string(host) + "\",\"pid\":" + std::to_string(100 + rank) +
           "},\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":" + std::to_string(sn) +
           ",\"coll_msg_size_bytes\":65536,\"coll_exec_time_us\":10,\"coll_busbw_gbs\":100.0}}";
  };
  for (int rank = 0; rank < 16; ++rank) {
    const int host = rank / 4, gpu = rank % 4;
    const std::string file = "tray-" + std::to_string(host) + "-pid" + std::to_string(100 + rank) + ".log";
    accumulator.add_line(file, 1, line("0xw", rank, 16, host, 1));
    accumulator.add_line(file, 2, line("0xr" + std::to_string(gpu), host, 4, host, 1));
    accumulator.add_line(file, 3, line("0xn" + std::to_string(host), gpu, 4, host, 1));
  }
  auto profile = read_profile(kFixtures + "/profiles/gb200-mnnvl-1n4h.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error();
  const ObserveReport report = build_observe_report(accumulator.finish(), {}, &*profile, "p", 0.1);
  EXPECT_EQ(communicator(report, "0xw").shape, "world");
  EXPECT_EQ(communicator(report, "0xr0").shape, "rail");
  EXPECT_EQ(communicator(report, "0xn0").shape, "node");
  // The profile records the 1 x 4 shape once, as its node section; both read against it.
  EXPECT_EQ(communicator(report, "0xr0").section, communicator(report, "0xn0").section);
  ASSERT_TRUE(communicator(report, "0xr0").section.has_value());
  EXPECT_NE(communicator(report, "0xr0").section->find("NVLink domain"), std::string::npos)
      << *communicator(report, "0xr0").section;
  EXPECT_TRUE(row(communicator(report, "0xr0"), "all_reduce").tuned_busbw.has_value());
}

TEST(ObserveReport, VerdictsAgainstTheProfileUnderWhatShips) {
  const Profile profile = two_node_profile();
  const ObserveReport report = report_of("job-2n2g", &profile);
  const ObserveCommunicatorReport& world = communicator(report, "0x1a2b3c4d5e6f70");
  const ObserveRow& all_reduce = row(world, "all_reduce");
  EXPECT_EQ(all_reduce.min_bytes, 1048576u);
  EXPECT_EQ(all_reduce.max_bytes, 2097151u);
  EXPECT_EQ(all_reduce.ops, std::optional<std::uint64_t>(12));
  EXPECT_EQ(all_reduce.tuned_source, "with_plugin");
  // 1 MiB is a measured size: the profile's with_plugin value there.
  EXPECT_NEAR(*all_reduce.tuned_busbw, 73.85803922001216, 1e-9);
  EXPECT_NEAR(*all_reduce.busbw_median, 73.0, 73.0 * 0.02);
  EXPECT_EQ(all_reduce.tuned, "Ring/LL128");
  EXPECT_FALSE(all_reduce.ran.has_value());  // Inspector's JSON does not say
  EXPECT_EQ(all_reduce.verdict, ObserveVerdict::as_tuned);
  const ObserveRow& all_gather = row(world, "all_gather");
  EXPECT_EQ(all_gather.verdict, ObserveVerdict::below_tuned);
  // Held at 4 MiB, the 4 ranks' 1 MiB parts: the size nccl-tests and the profile give it.
  EXPECT_EQ(all_gather.min_bytes, 4194304u);
  EXPECT_NEAR(*all_gather.ratio, 30.0 / 118.53764716005546, 0.02);
  // Time shares: every record's time; the world's all_gather took 4 x 12 x 60 us of it.
  const double total = 4 * 12 * (30 + 50 + 8 + 60);
  EXPECT_NEAR(all_gather.time_share, 4 * 12 * 60 / total, 1e-12);
  EXPECT_EQ(world.rows.front().collective, "all_gather");  // the most time first
  EXPECT_EQ(observe_exit_code(report), 1);
}

TEST(ObserveReport, AnUnmeasuredShapeSaysTheTuneLineThatMeasuresIt) {
  const Profile profile = two_node_profile();
  const ObserveReport report = report_of("job-2n2g", &profile);
  const ObserveCommunicatorReport& rail = communicator(report, "0xb0000000000001");
  EXPECT_FALSE(rail.section.has_value());
  const ObserveRow& all_reduce = row(rail, "all_reduce");
  EXPECT_EQ(all_reduce.verdict, ObserveVerdict::unmeasured);
  EXPECT_FALSE(all_reduce.tuned_busbw.has_value());
  EXPECT_EQ(all_reduce.tune, "nccltune tune --comms world,rail --ops all_reduce");
  EXPECT_EQ(row(communicator(report, "0xc000000000000a"), "all_reduce").tune,
            "nccltune tune --comms world,node --ops all_reduce");
}

TEST(ObserveReport, ASizeAboveTheMeasuredOnesAsksForLargerSizes) {
  Profile profile = two_node_profile();
  for (auto* curve : {&profile.collectives.at("all_reduce").results.tuned,
                      &profile.collectives.at("all_reduce").results.with_plugin})
    curve->resize(8);
  profile.collectives.at("all_reduce").results.sizes.resize(8);  // up to 256K
  const ObserveReport report = report_of("job-2n2g", &profile);
  const ObserveRow& all_reduce = row(communicator(report, "0x1a2b3c4d5e6f70"), "all_reduce");
  EXPECT_EQ(all_reduce.verdict, ObserveVerdict::unmeasured);
  EXPECT_EQ(all_reduce.tune, "nccltune tune --comms world --ops all_reduce --max-bytes 2097151");
}

TEST(ObserveReport, ProfileBusbwIsInterpolatedInLogSizeAndFallsBackToTuned) {
  CollectiveProfile collective;
  collective.results.sizes = {1024, 4096};
  collective.results.tuned = {10, 30};
  std::string source;
  EXPECT_NEAR(*profile_busbw_at(collective, 2048, &source), 20, 1e-9);  // halfway in log size
  EXPECT_EQ(source, "tuned");
  EXPECT_FALSE(profile_busbw_at(collective, 8192, &source).has_value());
  collective.results.with_plugin = {12, 36};
  EXPECT_NEAR(*profile_busbw_at(collective, 2048, &source), 24, 1e-9);
  EXPECT_EQ(source, "with_plugin");
}

TEST(ObserveReport, JudgeRow) {
  EXPECT_EQ(judge_row(90, 100, std::nullopt, "Ring/LL128", 0.1), ObserveVerdict::as_tuned);
  EXPECT_EQ(judge_row(89, 100, std::nullopt, "Ring/LL128", 0.1), ObserveVerdict::below_tuned);
  EXPECT_EQ(judge_row(120, 100, std::string("Tree/LL"), "Ring/LL128", 0.1), ObserveVerdict::not_served);
  EXPECT_EQ(judge_row(95, 100, std::string("Ring/LL128"), "Ring/LL128", 0.1), ObserveVerdict::as_tuned);
  EXPECT_EQ(judge_row(95, std::nullopt, std::nullopt, std::nullopt, 0.1), ObserveVerdict::unmeasured);
}

TEST(ObserveReport, TheRankThatArrivesLastIsAStragglerAndExitIs2) {
  const Profile profile = two_node_profile();
  const ObserveReport report = report_of("job-straggler", &profile);
  ASSERT_EQ(report.stragglers.size(), 1u);
  const ObserveStraggler& straggler = report.stragglers.front();
  EXPECT_EQ(straggler.rank, 3);
  EXPECT_EQ(straggler.host, "node-b");
  EXPECT_NE(straggler.file.find("node-b-pid202.log"), std::string::npos);
  EXPECT_FALSE(straggler.gpu.has_value());
  EXPECT_EQ(straggler.communicator, "0x5eed000000beef");
  EXPECT_DOUBLE_EQ(straggler.last_share, 1.0);
  // The others' median (52 us) minus its 20 us, in each of 12 collectives.
  EXPECT_DOUBLE_EQ(straggler.cost_us, 12 * 32.0);
  EXPECT_EQ(observe_exit_code(report), 2);
}

TEST(ObserveReport, NoStragglerWhereNobodyIsLast) {
  const Profile profile = two_node_profile();
  EXPECT_TRUE(report_of("job-2n2g", &profile).stragglers.empty());
}

TEST(ObserveReport, LastInFewerThanTenIsNoStraggler) {
  ObserveAccumulator accumulator;
  const auto line = [](int rank, int sn, double us) {
    return "{\"header\":{\"id\":\"0x9\",\"rank\":" + std::to_string(rank) +
           ",\"n_ranks\":2,\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\","
           "\"hostname\":\"h" +
           std::to_string(rank) + "\",\"pid\":" + std::to_string(rank + 1) +
           "},\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":" + std::to_string(sn) +
           ",\"coll_msg_size_bytes\":8192,\"coll_exec_time_us\":" + std::to_string(us) +
           ",\"coll_busbw_gbs\":1.0}}";
  };
  for (int sn = 1; sn <= 9; ++sn) {
    accumulator.add_line("h0-pid1.log", sn, line(0, sn, 50));
    accumulator.add_line("h1-pid2.log", sn, line(1, sn, 10));
  }
  EXPECT_TRUE(build_observe_report(accumulator.finish(), {}, nullptr, "", 0.1).stragglers.empty());
}

TEST(ObserveReport, AsTunedEverywhereExitsZero) {
  Profile profile = two_node_profile();
  const ObservedJob job = read_job("job-straggler");
  // Its one row is as tuned: with the straggler taken away, nothing is left to say.
  ObserveReport report = build_observe_report(job, {}, &profile, "p", 0.1);
  report.stragglers.clear();
  EXPECT_EQ(observe_exit_code(report), 0);
}

TEST(ObserveOutput, JsonHasTheSchemaAndEveryField) {
  const Profile profile = two_node_profile();
  const ObserveReport report = report_of("job-straggler", &profile);
  const auto json = nlohmann::json::parse(render_observe_json(report));
  EXPECT_EQ(json["schema"], "nccltune/observe/v1");
  EXPECT_EQ(json["context"]["records"], 48);
  EXPECT_EQ(json["context"]["inspector_versions"], nlohmann::json::array({"v4.0"}));
  EXPECT_EQ(json["context"]["profile"], "with-plugin-2n.yaml");
  const auto& world = json["communicators"][0];
  EXPECT_EQ(world["shape"], "world");
  EXPECT_EQ(world["section"], "world (2 nodes x 2)");
  EXPECT_EQ(world["source"], "json");
  const auto& first = world["rows"][0];
  for (const char* key : {"collective", "min_bytes", "max_bytes", "ops", "time_share", "busbw_median",
                          "busbw_p10", "tuned_busbw", "ratio", "ran", "tuned", "verdict"})
    EXPECT_TRUE(first.contains(key)) << key;
  EXPECT_TRUE(first["ran"].is_null());
  EXPECT_EQ(first["tuned"], "Ring/LL128");
  EXPECT_EQ(first["verdict"], "as_tuned");
  EXPECT_EQ(json["stragglers"][0]["rank"], 3);
  EXPECT_EQ(json["stragglers"][0]["host"], "node-b");
  EXPECT_TRUE(json["stragglers"][0]["gpu"].is_null());
  EXPECT_TRUE(json["suspects"].is_array());
}

TEST(ObserveOutput, PrometheusRowsSayWhatRanWithoutAnOpCountAndSuspectsAreNamed) {
  const InspectorFiles files = find_inspector_files({kFixtures + "/inspector/prom-suspect"});
  ObserveAccumulator accumulator;
  read_inspector_prom_files(files.prom_files, accumulator);
  const ObserveReport report =
      build_observe_report(accumulator.finish(), {"prom-suspect"}, nullptr, "", kDefaultObserveTolerance);
  const auto json = nlohmann::json::parse(render_observe_json(report));
  const auto& world = json["communicators"][0];
  EXPECT_EQ(world["source"], "prometheus");
  EXPECT_TRUE(world["rows"][0]["ops"].is_null());
  EXPECT_EQ(world["rows"][0]["ran"], "Ring/Simple");
  ASSERT_EQ(json["suspects"].size(), 1u);
  EXPECT_EQ(json["suspects"][0]["host"], "node-c");
  EXPECT_TRUE(json["suspects"][0]["why"].is_string());
  const std::string text = render_observe_text(report);
  EXPECT_NE(text.find("suspects:\n  node-c: 2 of 2 network communicators slow"), std::string::npos) << text;
  EXPECT_NE(text.find("NCCL ran: Ring/Simple"), std::string::npos);
}

TEST(ObserveOutput, TextNamesTheStragglerAndTheTuneLine) {
  const Profile profile = two_node_profile();
  const std::string straggler = render_observe_text(report_of("job-straggler", &profile));
  EXPECT_NE(straggler.find("rank 3 on node-b"), std::string::npos) << straggler;
  const std::string unmeasured = render_observe_text(report_of("job-2n2g", &profile));
  EXPECT_NE(unmeasured.find("measure it: nccltune tune --comms world,rail --ops all_reduce"),
            std::string::npos);
  EXPECT_NE(unmeasured.find("no straggler"), std::string::npos);
}

// NVIDIA's Inspector wrote these inside the fake NCCL (real-2.30.7/README.md): 2 emulated nodes on
// one machine, so every record says the same hostname while NCCL counted 2 nodes.
TEST(ObserveReal, FewerHostnamesThanNcclsNodesAreReadInNcclsCounts) {
  const ObserveReport report = report_of("real-2.30.7/json", nullptr);
  ASSERT_EQ(report.context.ranks, 8);
  EXPECT_EQ(report.context.hosts.size(), 1u);
  std::map<std::string, std::string> shapes;
  for (const auto& c : report.communicators) shapes[c.name] = c.shape;
  EXPECT_EQ(shapes["world"], "world");
  for (const char* rail : {"rail 0", "rail 1", "rail 2", "rail 3"}) EXPECT_EQ(shapes[rail], "rail") << rail;
  for (const char* node : {"node 0", "node 1"}) EXPECT_EQ(shapes[node], "node") << node;
  EXPECT_TRUE(report.stragglers.empty());
}

TEST(ObserveReal, TheLateRankIsTheOneStragglerNotTheRanksThatWaitedForIt) {
  // Rank 5 reaches every collective 400 us late; its node's other ranks wait for it there and
  // reach their rails late, so each is last in its rail, but in few of all its collectives.
  const ObserveReport report = report_of("real-2.30.7/json-late-rank5", nullptr);
  ASSERT_EQ(report.stragglers.size(), 1u);
  const ObserveStraggler& straggler = report.stragglers.front();
  EXPECT_EQ(straggler.rank, 5);
  EXPECT_EQ(straggler.gpu, "local rank 1");
  EXPECT_DOUBLE_EQ(straggler.last_share, 1.0);
  EXPECT_GT(straggler.cost_us, 12 * 400.0);
  EXPECT_EQ(observe_exit_code(report), 2);
}

}  // namespace
}  // namespace nccltune
