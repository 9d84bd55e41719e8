#include "fleet/fleet_output.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "fleet/fleet_attribution.h"
#include "fleet_test_support.h"

using namespace nccltune;
using nccltune::fleet_test::failed_sample;
using nccltune::fleet_test::FleetTable;

namespace {

// A survey with a bit of everything: gpu-a03 slow with every partner, gpu-a01 - gpu-a05 a slow
// link, gpu-a06 failed alone (left out of the pairs), gpu-a02 below the peak.
FleetSurvey mixed_survey() {
  FleetTable table;
  table.left_out = {6};
  table.busbw = [](int node) { return node == 2 ? 340.0 : 380.0; };
  table.pair = [](int a, int b) {
    if (a == 3 || b == 3) return 42.0 * 0.6;
    if (a == 1 && b == 5) return 42.0 * 0.5;
    return 42.0;
  };
  FleetInput input = table.input();
  input.local[6] = failed_sample({6}, 0, "hang", "no progress for 60 s");
  return attribute(input);
}

std::set<std::string> keys(const nlohmann::json& object) {
  std::set<std::string> out;
  for (const auto& item : object.items()) out.insert(item.key());
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string parse_error(const nlohmann::json& document) {
  const Result<FleetSurvey> parsed = parse_fleet_json(document.dump(), "fleet.json");
  return parsed.ok() ? "(parsed)" : parsed.error();
}

}  // namespace

TEST(FleetOutput, TextListsTheWorstFirst) {
  const FleetSurvey survey = mixed_survey();
  const std::string text = render_fleet_text(survey);
  const auto at = [&](const std::string& what) {
    const std::size_t found = text.find(what);
    EXPECT_NE(found, std::string::npos) << what << " in\n" << text;
    return found;
  };
  EXPECT_EQ(text.rfind("nccltune fleet: 8 node(s) x 4 GPU(s), all_reduce at 1G (busbw) and 8 (latency), 7 round(s) of pairs, "
                       "noise 0.0%\n",
                       0),
            0u)
      << text;
  const std::size_t header = at("node     local busbw  % of peak  pairs busbw  verdict  evidence");
  const std::size_t failed = at("gpu-a06  -            -          -            failed   hang in the local stage");
  const std::size_t slow = at("gpu-a03  380.0        84.4       25.2         slow     network: 6 of 6 pairs at 60%");
  const std::size_t warned = at("gpu-a02  340.0        75.6       25.2-42.0    warn     below 80% of the peak model");
  const std::size_t linked = at("gpu-a01  380.0        84.4       21.0-42.0    pass     link with gpu-a05");
  EXPECT_LT(header, failed);
  EXPECT_LT(failed, slow);
  EXPECT_LT(slow, warned);
  EXPECT_LT(warned, linked);
  at("link               busbw  evidence\ngpu-a01 - gpu-a05  21.0   slow only together: 50% of median");
  at("failed   what  stage  reason\ngpu-a06  hang  local  no progress for 60 s\n");
  at("FAIL  gpu-a06 failed alone (hang): no progress for 60 s\n");
  at("WARN  gpu-a02 alone at 76% of the peak model");
  for (char c : text) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << static_cast<int>(c);
}

TEST(FleetOutput, TextShowsHostileTextAsAscii) {
  FleetSurvey survey;
  survey.local.push_back({"n\x1b[31m\xc3\xa9", 1.0, std::nullopt, std::nullopt, "pass"});
  const std::string text = render_fleet_text(survey);
  EXPECT_NE(text.find("n\\x1b[31m\\xc3\\xa9"), std::string::npos) << text;
  for (char c : text) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << static_cast<int>(c);
}

TEST(FleetOutput, JsonHasTheSchemaFields) {
  const nlohmann::json json = fleet_to_json(mixed_survey());
  EXPECT_EQ(keys(json), (std::set<std::string>{"schema", "nodes", "gpus_per_node", "collective", "bytes", "small_bytes",
                                               "peak_busbw_gbps", "thresholds", "median_busbw_gbps", "noise_pct", "rounds",
                                               "local", "pairs",
                                               "suspects", "links", "failed", "verdicts"}));
  EXPECT_EQ(json["schema"], "nccltune/fleet/v1");
  EXPECT_EQ(json["nodes"], 8);
  EXPECT_EQ(json["gpus_per_node"], 4);
  EXPECT_EQ(json["collective"], "all_reduce");
  EXPECT_EQ(json["bytes"], 1073741824u);
  EXPECT_EQ(json["small_bytes"], 8u);
  EXPECT_EQ(json["peak_busbw_gbps"], (nlohmann::json{{"intra_node", 450.0}, {"inter_node", 50.0}}));
  EXPECT_EQ(json["thresholds"], (nlohmann::json{{"min_peak_pct", 80.0}, {"outlier", 0.85}}));
  EXPECT_EQ(json["rounds"], 7);

  EXPECT_EQ(keys(json["local"][0]), (std::set<std::string>{"node", "busbw_gbps", "small_us", "pct_of_peak", "verdict"}));
  EXPECT_EQ(json["local"][0]["busbw_gbps"], 380.0);
  EXPECT_EQ(json["local"][0]["pct_of_peak"], 84.4);
  EXPECT_EQ(json["local"][6]["busbw_gbps"], nullptr);
  EXPECT_EQ(json["local"][6]["verdict"], "failed");
  EXPECT_EQ(keys(json["pairs"][0]), (std::set<std::string>{"nodes", "round", "path", "busbw_gbps", "verdict"}));
  EXPECT_EQ(json["pairs"][0]["nodes"], (nlohmann::json{"gpu-a00", "gpu-a07"}));
  EXPECT_EQ(json["pairs"][0]["round"], 1);
  EXPECT_EQ(json["pairs"][0]["path"], "network");  // no NVLink domain: every pair crossed the network
  EXPECT_EQ(keys(json["median_busbw_gbps"]), (std::set<std::string>{"local", "pairs"}));
  EXPECT_EQ(keys(json["suspects"][0]), (std::set<std::string>{"node", "path", "evidence", "busbw_gbps", "median_gbps"}));
  EXPECT_EQ(json["suspects"][0]["node"], "gpu-a03");
  EXPECT_EQ(json["suspects"][0]["path"], "network");
  EXPECT_EQ(keys(json["links"][0]), (std::set<std::string>{"nodes", "busbw_gbps", "evidence"}));
  EXPECT_EQ(json["links"][0]["nodes"], (nlohmann::json{"gpu-a01", "gpu-a05"}));
  EXPECT_EQ(keys(json["failed"][0]), (std::set<std::string>{"node", "what", "stage", "reason"}));
  EXPECT_EQ(json["failed"][0], (nlohmann::json{{"node", "gpu-a06"}, {"what", "hang"}, {"stage", "local"},
                                               {"reason", "no progress for 60 s"}}));
  EXPECT_EQ(keys(json["verdicts"][0]), (std::set<std::string>{"level", "check", "message"}));
  EXPECT_EQ(json["verdicts"][0]["check"], "fleet");

  FleetSurvey unknown = mixed_survey();
  unknown.peak_intra_gbps.reset();
  unknown.peak_inter_gbps.reset();
  EXPECT_EQ(fleet_to_json(unknown)["peak_busbw_gbps"], (nlohmann::json{{"intra_node", nullptr}, {"inter_node", nullptr}}));
}

TEST(FleetOutput, JsonRoundsToATenth) {
  FleetSurvey survey;
  survey.local.push_back({"a", 381.2345, 12.3456, 84.71, "pass"});
  survey.noise_pct = 1.234;
  const nlohmann::json json = fleet_to_json(survey);
  EXPECT_EQ(json["local"][0]["busbw_gbps"], 381.2);
  EXPECT_EQ(json["local"][0]["small_us"], 12.35);
  EXPECT_EQ(json["local"][0]["pct_of_peak"], 84.7);
  EXPECT_EQ(json["noise_pct"], 1.2);
}

TEST(FleetOutput, JsonRoundTrip) {
  FleetTable noisy;
  noisy.spread = 0.037;
  noisy.busbw = [](int node) { return 377.777 + node * 1.111; };
  noisy.pair = [](int a, int b) { return a == 4 || b == 4 ? -1.0 : 41.2345 + a * 0.01 + b * 0.001; };
  FleetInput stopped = noisy.input();
  stopped.stopped = "the budget";
  stopped.peak_inter_gbps.reset();
  for (const FleetSurvey& survey : {mixed_survey(), attribute(noisy.input()), attribute(stopped), FleetSurvey{}}) {
    const std::string text = fleet_to_json(survey).dump(2);
    const Result<FleetSurvey> parsed = parse_fleet_json(text, "fleet.json");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(*parsed, survey) << text;
  }
}

TEST(FleetOutput, ParseErrorsNameTheOriginAndTheField) {
  const nlohmann::json good = fleet_to_json(mixed_survey());
  const std::string text = good.dump();

  Result<FleetSurvey> truncated = parse_fleet_json(text.substr(0, text.size() / 2), "fleet.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error(), "fleet.json: not valid JSON");

  nlohmann::json changed = good;
  changed["schema"] = "nccltune/fleet/v2";
  EXPECT_EQ(parse_error(changed), "fleet.json: schema: expected \"nccltune/fleet/v1\"");
  EXPECT_EQ(parse_error(nlohmann::json::array()), "fleet.json: not a JSON object");

  changed = good;
  changed["local"][2]["busbw_gbps"] = "fast";
  EXPECT_EQ(parse_error(changed), "fleet.json: local[2].busbw_gbps: not a number");
  changed = good;
  changed["nodes"] = 8.5;
  EXPECT_EQ(parse_error(changed), "fleet.json: nodes: not an integer >= 0");
  changed = good;
  changed["nodes"] = 100001;
  EXPECT_EQ(parse_error(changed), "fleet.json: nodes: 100001 is not from 0 to 100000");
  changed = good;
  changed.erase("pairs");
  EXPECT_EQ(parse_error(changed), "fleet.json: pairs: missing");
  changed = good;
  changed["pairs"][1]["nodes"] = {"a"};
  EXPECT_EQ(parse_error(changed), "fleet.json: pairs[1].nodes: not a list of two node names");
  changed = good;
  changed["suspects"][0]["path"] = "psychic";
  EXPECT_EQ(parse_error(changed), "fleet.json: suspects[0].path: 'psychic' is not one of network, local, nvlink");
  changed = good;
  changed["pairs"][0]["path"] = "pcie";
  EXPECT_EQ(parse_error(changed), "fleet.json: pairs[0].path: 'pcie' is not one of network, nvlink");
  changed = good;
  changed["local"][0]["domain"] = 7;
  EXPECT_EQ(parse_error(changed), "fleet.json: local[0].domain: not a string");
  changed = good;
  changed["failed"][0] = 3;
  EXPECT_EQ(parse_error(changed), "fleet.json: failed[0]: not an object");
  changed = good;
  changed["verdicts"][0]["message"] = "two\nlines";
  EXPECT_EQ(parse_error(changed),
            "fleet.json: verdicts[0].message: not clean text (control characters, or over 4096 bytes)");
  changed = good;
  changed["thresholds"]["outlier"] = 3;
  EXPECT_EQ(parse_error(changed), "fleet.json: thresholds.outlier: 3 is out of range");
  changed = good;
  changed["links"][0]["busbw_gbps"] = -1;
  EXPECT_EQ(parse_error(changed), "fleet.json: links[0].busbw_gbps: -1 is out of range");

  const std::string huge(kMaxFleetJsonBytes + 1, ' ');
  Result<FleetSurvey> too_big = parse_fleet_json(huge, "big.json");
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error(), "big.json: 16777217 bytes, more than the 16 MiB allowed");
}

TEST(FleetOutput, ParseKeepsOptionalFieldsOptional) {
  const Result<FleetSurvey> minimal = parse_fleet_json(
      R"({"schema": "nccltune/fleet/v1", "nodes": 0, "gpus_per_node": 1, "collective": "all_reduce", "bytes": 0,
          "peak_busbw_gbps": {}, "local": [], "pairs": [], "suspects": [], "links": [], "failed": [],
          "verdicts": []})",
      "minimal.json");
  ASSERT_TRUE(minimal.ok()) << minimal.error();
  EXPECT_EQ(*minimal, FleetSurvey{});
}

TEST(FleetOutput, DrainLinesForSuspectAndFailedNodesOnly) {
  const std::vector<std::string> drain = lines(render_slurm_drain(mixed_survey()));
  ASSERT_EQ(drain.size(), 3u);
  EXPECT_EQ(drain[0],
            "scontrol update NodeName=gpu-a06 State=DRAIN Reason=\"nccltune fleet: hang in the local stage: no "
            "progress for 60 s\"");
  EXPECT_EQ(drain[1],
            "scontrol update NodeName=gpu-a03 State=DRAIN Reason=\"nccltune fleet: 6 of 6 pairs at 60% of median\"");
  EXPECT_EQ(drain[2],
            "# link gpu-a01 - gpu-a05 (not drained, a link is not a node): slow only together: 50% of median; both at "
            "100% with others");
  FleetSurvey clean;
  EXPECT_EQ(render_slurm_drain(clean), "# nccltune fleet: no node to drain\n");
}

TEST(FleetOutput, DrainNeverPutsHostileTextOnACommandLine) {
  FleetSurvey survey;
  survey.suspects.push_back({"a;rm -rf /", "network", "3 of 3", 1, 2});
  survey.suspects.push_back({"$(x)", "local", "alone", 1, 2});
  survey.suspects.push_back({"-gpu", "local", "alone", 1, 2});
  survey.suspects.push_back({std::string(256, 'a'), "local", "alone", 1, 2});
  survey.suspects.push_back({"gpu-b01", "network", "evil $(reboot) `id` \\ \"quoted\" !1 \n done", 1, 2});
  survey.failed.push_back({"gpu-b02\nscontrol update NodeName=x", "hang", "pairs", ""});
  survey.links.push_back({{"l1\nreboot", "l2"}, 1, "slow\nreboot"});
  const std::vector<std::string> drain = lines(render_slurm_drain(survey));
  ASSERT_EQ(drain.size(), 7u);
  int commands = 0;
  for (const std::string& line : drain) {
    if (line.rfind("# ", 0) == 0) continue;
    ++commands;
    EXPECT_EQ(line,
              "scontrol update NodeName=gpu-b01 State=DRAIN Reason=\"nccltune fleet: evil (reboot) id quoted 1 done\"");
  }
  EXPECT_EQ(commands, 1);
  EXPECT_EQ(drain[0], "# skipped 'gpu-b02\\x0ascontrol update NodeName=x': not a Slurm host name (nccltune fleet: hang "
                      "in the pairs stage)");
  EXPECT_EQ(drain[1], "# skipped 'a;rm -rf /': not a Slurm host name (nccltune fleet: 3 of 3)");

  FleetSurvey long_reason;
  long_reason.suspects.push_back({"gpu-c01", "network", std::string(500, 'x'), 1, 2});
  const std::string line = render_slurm_drain(long_reason);
  EXPECT_EQ(line.size(), std::string("scontrol update NodeName=gpu-c01 State=DRAIN Reason=\"\"\n").size() + 200);
}

TEST(FleetOutput, NonFiniteNumbersAreRefused) {
  const std::string text = fleet_to_json(mixed_survey()).dump();
  const std::string key = "\"busbw_gbps\":";
  for (const std::string literal : {"1e999", "NaN"}) {
    std::string changed = text;
    changed.insert(changed.find(key) + key.size(), literal + ",\"x\":");
    const Result<FleetSurvey> parsed = parse_fleet_json(changed, "fleet.json");
    ASSERT_FALSE(parsed.ok()) << literal;
    EXPECT_EQ(parsed.error(), "fleet.json: not valid JSON") << literal;
  }
}
