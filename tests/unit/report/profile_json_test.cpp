// `nccltune show --format json` (nccltune/show/v1): the JSON is read back with nlohmann-json and
// every field is held against the profile it came from: the keys documented in configs/README.md
// and no others, the env, each communicator shape's collectives with their speedups (geometric
// mean and best size, the env alone and with the plugin), per-size choices and busbw, the
// confirmation status, the peak share and the provenance. A number the profile lacks is null.
#include "report/profile_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "report/profile_view.h"
#include "report_fixtures.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::read_report_profile;

namespace {

using ShowJson = nlohmann::json;

ShowJson show_json(const Profile& profile, const std::vector<int>& counts = {2}) {
  const std::string text =
      render_profile_json(view_profile(profile), {"store/key/2n.yaml", "nccltune 9.9.9", counts});
  EXPECT_EQ(text.back(), '\n');
  return ShowJson::parse(text);  // throws, failing the test, on anything that is not JSON
}

std::set<std::string> keys_of(const ShowJson& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

Profile json_fixture(const std::string& relative) {
  Result<Profile> profile = read_profile(test_support::fixture(relative));
  EXPECT_TRUE(profile.ok()) << profile.error();
  return profile.ok() ? *profile : Profile{};
}

// A number of the profile as JSON gives it back: NaN as null.
void expect_number(const ShowJson& value, double expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(value.is_null()) << what << ": " << value;
  } else {
    ASSERT_TRUE(value.is_number()) << what << ": " << value;
    EXPECT_DOUBLE_EQ(value.get<double>(), expected) << what;
  }
}

void expect_collective_matches(const ShowJson& json, const std::string& name, const CollectiveProfile& c) {
  EXPECT_EQ(json["name"], name);
  EXPECT_EQ(json["guard"], c.guard);
  EXPECT_EQ(keys_of(json), (std::set<std::string>{"name", "guard", "measured", "speedup", "confirmation",
                                                  "peak", "per_size", "switches", "sizes", "nccl_model"}));
  const ProfileResults& r = c.results;
  expect_number(json["speedup"]["tuned"]["geomean"], r.speedup_geomean, name + " geomean");
  expect_number(json["speedup"]["worst_size_ratio"], r.worst_size_ratio, name + " worst");
  ASSERT_EQ(json["sizes"].size(), r.sizes.size()) << name;
  for (std::size_t i = 0; i < r.sizes.size(); ++i) {
    const ShowJson& row = json["sizes"][i];
    EXPECT_EQ(row["bytes"], r.sizes[i]);
    expect_number(row["defaults_gbps"], r.baseline[i], name + " defaults");
    expect_number(row["tuned_gbps"], r.tuned[i], name + " tuned");
    expect_number(row["speedup"], r.baseline[i] > 0 ? r.tuned[i] / r.baseline[i] : std::nan(""),
                  name + " speedup");
  }
  ASSERT_EQ(json["per_size"].size(), c.per_size.size()) << name;
  for (std::size_t i = 0; i < c.per_size.size(); ++i) {
    EXPECT_EQ(json["per_size"][i]["min_bytes"], c.per_size[i].min_bytes);
    EXPECT_EQ(json["per_size"][i]["max_bytes"], c.per_size[i].max_bytes);
    EXPECT_EQ(json["per_size"][i]["algo"], c.per_size[i].algo);
    EXPECT_EQ(json["per_size"][i]["proto"], c.per_size[i].proto);
  }
  ASSERT_EQ(json["switches"].size(), c.switches.size()) << name;
  for (std::size_t i = 0; i < c.switches.size(); ++i) {
    const ShowJson& at = json["switches"][i];
    const SizeSwitch& s = c.switches[i];
    EXPECT_EQ(keys_of(at),
              (std::set<std::string>{"lo", "hi", "bytes", "fit", "below", "above", "below_latency_us",
                                     "below_gbps", "above_latency_us", "above_gbps"}));
    EXPECT_EQ(at["lo"], s.lo);
    EXPECT_EQ(at["hi"], s.hi);
    EXPECT_EQ(at["bytes"], s.bytes);
    EXPECT_EQ(at["fit"], s.fit);
    EXPECT_EQ(at["below"], s.below);
    EXPECT_EQ(at["above"], s.above);
    expect_number(at["below_latency_us"], s.below_latency_us, name + " below latency");
    expect_number(at["below_gbps"], s.below_gbps, name + " below bandwidth");
    expect_number(at["above_latency_us"], s.above_latency_us, name + " above latency");
    expect_number(at["above_gbps"], s.above_gbps, name + " above bandwidth");
  }
  if (r.peak_busbw_gbps) {
    expect_number(json["peak"]["busbw_gbps"], *r.peak_busbw_gbps, name + " peak");
    expect_number(json["peak"]["percent"], 100 * r.tuned.back() / *r.peak_busbw_gbps, name + " peak share");
    EXPECT_EQ(json["peak"]["bytes"], r.sizes.back());
  }
}

}  // namespace

TEST(ProfileJson, TheDemoProfileReadsBackFieldByField) {
  const Profile p = read_report_profile("collectives/2n.yaml");
  const ShowJson j = show_json(p, {1, 2});
  EXPECT_EQ(keys_of(j),
            (std::set<std::string>{"schema", "context", "shape", "keep_defaults", "env", "withheld", "notes",
                                   "communicators", "provenance", "failed"}));
  EXPECT_EQ(j["schema"], "nccltune/show/v1");
  EXPECT_EQ(j["context"]["profile"], "store/key/2n.yaml");
  EXPECT_EQ(j["context"]["profile_schema"], "nccltune/profile/v2");
  EXPECT_EQ(j["context"]["generated_by"], "nccltune 9.9.9");
  EXPECT_EQ(j["context"]["stored_node_counts"], ShowJson::array({1, 2}));
  EXPECT_EQ(j["shape"]["node_type_key"], p.shape.node_type_key);
  EXPECT_EQ(j["shape"]["nodes"], 2);
  EXPECT_EQ(j["shape"]["nccl_version"], "2.28.9");
  EXPECT_EQ(j["keep_defaults"], false);
  // The fixture's env, as env would serve it.
  EXPECT_EQ(j["env"], (ShowJson{{"NCCL_MIN_NCHANNELS", "32"}}));
  EXPECT_EQ(j["withheld"], ShowJson::array());

  // A v2 profile is one world section holding every collective.
  ASSERT_EQ(j["communicators"].size(), 1u);
  const ShowJson& world = j["communicators"][0];
  EXPECT_EQ(world["role"], "world");
  EXPECT_EQ(world["nodes"], p.shape.nodes);
  EXPECT_EQ(world["ranks_per_node"], p.shape.gpus_per_node);
  ASSERT_EQ(world["collectives"].size(), p.collectives.size());
  std::size_t i = 0;
  for (const auto& [name, collective] : p.collectives) {
    const ShowJson& c = world["collectives"][i++];
    expect_collective_matches(c, name, collective);
    // The best size is the one of the largest measured gain, and no size gains more.
    const ShowJson& best = c["speedup"]["tuned"]["best"];
    ASSERT_TRUE(best.is_object()) << name;
    for (const ShowJson& row : c["sizes"]) {
      if (row["speedup"].is_number()) {
        EXPECT_LE(row["speedup"].get<double>(), best["ratio"].get<double>());
      }
    }
    EXPECT_TRUE(c["speedup"]["with_plugin"].is_null()) << "not confirmed through the plugin: " << name;
    const std::string status = collective.guard              ? "guard"
                               : collective.per_size.empty() ? "env_only"
                                                             : "not_confirmed";
    EXPECT_EQ(c["confirmation"]["status"], status) << name;
  }
  EXPECT_EQ(j["provenance"]["trials"], p.provenance.trials);
  EXPECT_EQ(j["provenance"]["pairs"], 0) << "the fixture is from before pairs were counted apart";
  EXPECT_EQ(j["provenance"]["failed_trials"], p.provenance.failed_trials);
  EXPECT_EQ(j["provenance"]["confirmation"], p.provenance.confirmation);
  ASSERT_EQ(j["failed"].size(), p.failed.size());
  EXPECT_EQ(j["failed"][1]["env"], (ShowJson{{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL128"}}));
  EXPECT_EQ(j["failed"][1]["outcome"], "wrong_data");
}

TEST(ProfileJson, EachCommunicatorShapeAndTheWithheldSettingsFollowTheWorld) {
  Profile p = read_report_profile("collectives/2n.yaml");
  CommunicatorSection rail;
  rail.nodes = 2;
  rail.ranks_per_node = 1;
  rail.role = CommRole::rail;
  rail.collectives["all_reduce"] = p.collectives.at("all_reduce");
  rail.collectives["all_reduce"].results.speedup_geomean = 1.25;
  p.shapes = {rail, {1, p.shape.gpus_per_node, CommRole::node, {}}};
  p.withheld = {{{{"NCCL_BUFFSIZE", "8388608"}}, "rail (2 nodes x 1): all_reduce -20% at 1M"}};
  const ShowJson j = show_json(p);
  EXPECT_EQ(j["context"]["profile_schema"], "nccltune/profile/v3");
  EXPECT_EQ(j["withheld"], ShowJson::parse(R"([{"env": {"NCCL_BUFFSIZE": "8388608"},
                                               "why": "rail (2 nodes x 1): all_reduce -20% at 1M"}])"));
  ASSERT_EQ(j["communicators"].size(), 3u);
  EXPECT_EQ(j["communicators"][0]["role"], "world");
  const ShowJson& r = j["communicators"][1];
  EXPECT_EQ(r["role"], "rail");
  EXPECT_EQ(r["nodes"], 2);
  EXPECT_EQ(r["ranks_per_node"], 1);
  ASSERT_EQ(r["collectives"].size(), 1u);
  expect_collective_matches(r["collectives"][0], "all_reduce", p.shapes[0].collectives.at("all_reduce"));
  EXPECT_EQ(r["collectives"][0]["speedup"]["tuned"]["geomean"], 1.25);
  // NCCL's choices and model were logged on the world: a rail's sizes carry none.
  for (const ShowJson& row : r["collectives"][0]["sizes"]) EXPECT_TRUE(row["nccl_chose"].is_null());
  EXPECT_EQ(j["communicators"][2]["role"], "node");
  EXPECT_EQ(j["communicators"][2]["collectives"], ShowJson::array());
}

TEST(ProfileJson, WithThePluginItsSpeedupsAndEachConfirmationStatus) {
  Profile p = json_fixture("profiles/with-plugin-2n.yaml");
  auto it = p.collectives.begin();
  const std::string confirmed = it->first;
  it->second.plugin = {PluginStatus::confirmed, "2 range(s) served at every measured size"};
  const std::string declined = (++it)->first;
  it->second.plugin = {PluginStatus::not_served, "tuned for 8 GPUs per node, the communicator has 2"};
  const std::string slower = (++it)->first;
  it->second.guard = false;  // the fixture's alltoall is a guard, whose status says so first
  it->second.plugin = {PluginStatus::slower, "0 .. <64K: -9% at 8K"};
  const ShowJson world = show_json(p)["communicators"][0];
  std::size_t i = 0;
  for (const auto& [name, collective] : p.collectives) {
    const ShowJson& c = world["collectives"][i++];
    expect_collective_matches(c, name, collective);
    const ProfileResults& r = collective.results;
    ASSERT_FALSE(r.with_plugin.empty()) << name;
    expect_number(c["speedup"]["with_plugin"]["geomean"], r.with_plugin_speedup_geomean, name);
    std::size_t best = 0;
    for (std::size_t k = 0; k < r.sizes.size(); ++k) {
      expect_number(c["sizes"][k]["with_plugin_gbps"], r.with_plugin[k], name + " with plugin");
      if (r.with_plugin[k] / r.baseline[k] > r.with_plugin[best] / r.baseline[best]) best = k;
    }
    EXPECT_EQ(c["speedup"]["with_plugin"]["best"]["bytes"], r.sizes[best]) << name;
    expect_number(c["speedup"]["with_plugin"]["best"]["ratio"], r.with_plugin[best] / r.baseline[best], name);
    const std::string status = name == confirmed  ? "confirmed"
                               : name == declined ? "not_served"
                               : name == slower   ? "withheld"
                                                  : "";
    if (status.empty()) continue;
    EXPECT_EQ(c["confirmation"]["status"], status) << name;
    EXPECT_EQ(c["confirmation"]["reason"], collective.plugin.why) << name;
  }
}

TEST(ProfileJson, NcclsModelAndUnrecordedNumbersAsNull) {
  const Profile modelled = json_fixture("profiles/nccl-model-2n.yaml");
  const ShowJson c = show_json(modelled)["communicators"][0]["collectives"][0];
  ASSERT_EQ(c["name"], "all_reduce");
  ASSERT_EQ(c["nccl_model"].size(), 7u);
  EXPECT_EQ(c["nccl_model"][5], ShowJson::parse(R"({"algo": "RING", "proto": "SIMPLE", "latency_us": 12.6,
                                                    "busbw_gbps": 255.5})"));
  EXPECT_FALSE(c["sizes"].back()["nccl_chose"].is_null()) << "NCCL's log names its choice there";

  const Profile nan = read_report_profile("nan-2n.yaml");
  const ShowJson n = show_json(nan)["communicators"][0]["collectives"][0];
  EXPECT_TRUE(n["speedup"]["tuned"]["geomean"].is_null()) << n["speedup"];
  bool some_null = false;
  for (const ShowJson& row : n["sizes"]) some_null = some_null || row["tuned_gbps"].is_null();
  EXPECT_TRUE(some_null) << "the fixture's .nan values read back as null";
}

// Where a choice switches between measured sizes, with its bracket and fits, as the profile says.
TEST(ProfileJson, SwitchesWithTheirBracketAndFits) {
  const Profile p = json_fixture("profiles/switches-2n.yaml");
  const ShowJson c = show_json(p)["communicators"][0]["collectives"][0];
  ASSERT_EQ(c["name"], "all_reduce");
  expect_collective_matches(c, "all_reduce", p.collectives.at("all_reduce"));
  ASSERT_EQ(c["switches"].size(), 2u);
  EXPECT_EQ(c["switches"][0], ShowJson::parse(R"({"lo": 1024, "hi": 65536, "bytes": 20572, "fit": "crossing",
      "below": "Tree/LL", "above": "Ring/LL128", "below_latency_us": 6.0, "below_gbps": 2.0,
      "above_latency_us": 14.0, "above_gbps": 9.0})"));
  EXPECT_EQ(c["switches"][1]["fit"], "outside-bracket");
  EXPECT_EQ(c["switches"][1]["bytes"], c["switches"][1]["hi"]);
  // A profile without switches has an empty list, never null.
  const ShowJson none =
      show_json(json_fixture("profiles/h100-2n.yaml"))["communicators"][0]["collectives"][0];
  EXPECT_TRUE(none["switches"].is_array() && none["switches"].empty()) << none["switches"];
}
