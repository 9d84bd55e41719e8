// report --observed reads what `nccltune observe --format json` wrote: every field the page draws,
// the optional ones a newer or an older observe writes or leaves out, and one line naming the
// file and the field for a wrong schema, a missing field or a value observe never writes.
#include "report/observation_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/atomic_file.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;

namespace {

std::string observed_fixture_text(const std::string& name) {
  auto text = read_text_file(fixture("report/observed/" + name), kMaxObservationJsonBytes);
  EXPECT_TRUE(text) << text.error();
  return text ? *text : std::string();
}

// job-2n2g.json with `edit` applied, parsed as "obs.json".
template <class Edit>
Result<Observation> parse_edited(Edit edit) {
  nlohmann::json document = nlohmann::json::parse(observed_fixture_text("job-2n2g.json"));
  edit(document);
  return parse_observation_json(document.dump(), "obs.json");
}

std::string error_of(const Result<Observation>& parsed) {
  return parsed ? std::string("(parsed)") : parsed.error();
}

}  // namespace

TEST(ObservationJson, ReadsWhatObserveWrites) {
  auto o = read_observation_json(fixture("report/observed/job-2n2g.json"));
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->records, 192u);
  EXPECT_EQ(o->ranks, 4);
  EXPECT_EQ(o->hosts, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(o->inspector_versions, std::vector<std::string>{"v4.0"});
  ASSERT_TRUE(o->profile);
  EXPECT_EQ(*o->profile, "tests/fixtures/profiles/with-plugin-2n.yaml");
  EXPECT_FALSE(o->tolerance_given);
  EXPECT_DOUBLE_EQ(o->tolerance, kObservationDefaultTolerance);
  ASSERT_EQ(o->communicators.size(), 5u);
  const ObservationCommunicator& world = o->communicators[0];
  EXPECT_EQ(world.shape, "world");
  EXPECT_EQ(world.section, std::optional<std::string>("world (2 nodes x 2)"));
  EXPECT_EQ(world.matched, 24u);
  ASSERT_EQ(world.rows.size(), 2u);
  EXPECT_EQ(world.rows[0].collective, "all_gather");
  EXPECT_EQ(world.rows[0].min_bytes, 1048576u);
  EXPECT_EQ(world.rows[0].max_bytes, 2097151u);
  EXPECT_EQ(world.rows[0].verdict, "below_tuned");
  ASSERT_TRUE(world.rows[0].ratio);
  EXPECT_NEAR(*world.rows[0].ratio, 0.713, 1e-3);
  EXPECT_EQ(world.rows[0].tuned, std::optional<std::string>("Ring/LL128"));
  EXPECT_FALSE(world.rows[0].ran);
  const ObservationCommunicator& rail = o->communicators[1];
  EXPECT_EQ(rail.shape, "rail");
  EXPECT_FALSE(rail.section);
  EXPECT_EQ(rail.rows[0].verdict, "unmeasured");
  EXPECT_FALSE(rail.rows[0].tuned_busbw);
  EXPECT_EQ(rail.rows[0].tune, "nccltune tune --comms world,rail --ops all_reduce");
  EXPECT_TRUE(o->stragglers.empty());
  EXPECT_TRUE(o->suspects.empty());
}

TEST(ObservationJson, ReadsTheStraggler) {
  auto o = read_observation_json(fixture("report/observed/straggler.json"));
  ASSERT_TRUE(o) << o.error();
  ASSERT_EQ(o->stragglers.size(), 1u);
  EXPECT_EQ(o->stragglers[0].rank, 3);
  EXPECT_EQ(o->stragglers[0].host, "node-b");
  EXPECT_FALSE(o->stragglers[0].gpu);
  EXPECT_DOUBLE_EQ(o->stragglers[0].last_share, 1.0);
  EXPECT_DOUBLE_EQ(o->stragglers[0].cost_us, 384.0);
}

// What a newer observe adds is read where the page draws it, and a key nobody knows is ignored.
TEST(ObservationJson, ReadsTheFieldsANewerObserveWrites) {
  auto o = read_observation_json(fixture("report/observed/newer-fields.json"));
  ASSERT_TRUE(o) << o.error();
  EXPECT_TRUE(o->tolerance_given);
  EXPECT_DOUBLE_EQ(o->tolerance, 0.05);
  EXPECT_EQ(o->communicators[0].rows[0].verdict, "not_served");
  EXPECT_EQ(o->communicators[0].rows[0].ran, std::optional<std::string>("Tree/LL"));
  ASSERT_EQ(o->suspects.size(), 1u);
  EXPECT_EQ(o->suspects[0].host, "node-<x>");
  ASSERT_EQ(o->stragglers.size(), 1u);
  EXPECT_EQ(o->stragglers[0].gpu, std::optional<std::string>("GPU1"));
}

// An older observe wrote none of the optional fields: the file still reads.
TEST(ObservationJson, ReadsAFileWithoutTheOptionalFields) {
  auto o = read_observation_json(fixture("report/observed/minimal.json"));
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->communicators.size(), 5u);
  EXPECT_EQ(o->communicators[0].matched, 0u);
  EXPECT_TRUE(o->communicators[1].rows[0].tune.empty());
  EXPECT_TRUE(o->suspects.empty());
}

TEST(ObservationJson, AWrongSchemaIsOneLineNamingTheFile) {
  EXPECT_EQ(
      error_of(parse_edited([](nlohmann::json& d) { d["schema"] = "nccltune/fleet/v1"; })),
      "obs.json: schema: expected \"nccltune/observe/v1\" (what `nccltune observe --format json` writes)");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d.erase("schema"); })).substr(0, 18),
            "obs.json: schema: ");
  EXPECT_EQ(error_of(parse_observation_json("{\"schema\": ", "obs.json")), "obs.json: not valid JSON");
  EXPECT_EQ(error_of(parse_observation_json("[]", "obs.json")), "obs.json: not a JSON object");
}

TEST(ObservationJson, AMissingRequiredFieldIsNamedWithItsPath) {
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["context"].erase("records"); })),
            "obs.json: context.records: missing");
  EXPECT_EQ(
      error_of(parse_edited([](nlohmann::json& d) { d["communicators"][1]["rows"][0].erase("verdict"); })),
      "obs.json: communicators[1].rows[0].verdict: missing");
  EXPECT_EQ(
      error_of(parse_edited([](nlohmann::json& d) { d["communicators"][0]["rows"][1].erase("ratio"); })),
      "obs.json: communicators[0].rows[1].ratio: missing");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["communicators"][2].erase("section"); })),
            "obs.json: communicators[2].section: missing");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d.erase("stragglers"); })),
            "obs.json: stragglers: missing");
  EXPECT_EQ(
      error_of(parse_edited([](nlohmann::json& d) {
        d["stragglers"] = nlohmann::json::array(
            {{{"rank", 1}, {"host", "h"}, {"gpu", nullptr}, {"communicator", "0x1"}, {"last_share", 0.9}}});
      })),
      "obs.json: stragglers[0].cost_us: missing");
}

TEST(ObservationJson, AValueObserveNeverWritesIsNamed) {
  EXPECT_EQ(
      error_of(
          parse_edited([](nlohmann::json& d) { d["communicators"][0]["rows"][0]["verdict"] = "great"; })),
      "obs.json: communicators[0].rows[0].verdict: not as_tuned, below_tuned, not_served or unmeasured");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["communicators"][0]["shape"] = "ring"; })),
            "obs.json: communicators[0].shape: not world, rail, node or other");
  EXPECT_EQ(
      error_of(parse_edited([](nlohmann::json& d) { d["communicators"][0]["rows"][0]["time_share"] = 1.5; })),
      "obs.json: communicators[0].rows[0].time_share: not between 0 and 1");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["communicators"][0]["rows"][0]["ops"] = -1; })),
            "obs.json: communicators[0].rows[0].ops: not an integer");
  EXPECT_EQ(
      error_of(parse_edited([](nlohmann::json& d) { d["communicators"][0]["rows"][0]["max_bytes"] = 1; })),
      "obs.json: communicators[0].rows[0].max_bytes: below min_bytes");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["communicators"][0]["rows"] = "none"; })),
            "obs.json: communicators[0].rows: not a list");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["communicators"][3] = 7; })),
            "obs.json: communicators[3]: not an object");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) {
              d["suspects"] = {{{"host", "h"}}};
            })),
            "obs.json: suspects[0].why: missing");
  EXPECT_EQ(error_of(parse_edited([](nlohmann::json& d) { d["context"]["tolerance"] = 2; })),
            "obs.json: context.tolerance: not between 0 and 1");
}

TEST(ObservationJson, AMissingFileIsNamed) {
  auto o = read_observation_json(fixture("report/observed/absent.json"));
  ASSERT_FALSE(o);
  EXPECT_NE(o.error().find("absent.json"), std::string::npos) << o.error();
}
