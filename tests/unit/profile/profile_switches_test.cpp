// A collective's `switches`: where a per_size choice gives way to the next between two
// measured sizes, with the bracket and the fits as evidence. Written after per_size only when
// there are some, read back exactly, and every rule of the strict reader refused in one line that
// names the file, line and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>

#include "golden.h"
#include "profile/profile.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;

namespace {

// Tree/LL128 won at 1M, Ring/LL128 at 1.25M, and their fits cross at 1152000 bytes.
SizeSwitch crossing_switch() {
  return {1048576, 1310720, 1152000, "crossing", "Tree/LL128", "Ring/LL128", 5.0, 16.0, 50.0, 42.7};
}

Profile profile_with_switches() {
  Profile p;
  p.shape.node_type_key = "h100.8gpu";
  p.shape.nodes = 2;
  p.shape.gpus_per_node = 8;
  p.shape.ranks = 16;
  CollectiveProfile& c = p.collectives["all_reduce"];
  c.measured = {8, 16777216};
  c.per_size = {{0, 1151999, "Tree", "LL128", 0, 0},
                {1152000, 16777215, "Ring", "LL128", 0, 0},
                {16777216, 16777216, "Ring", "Simple", 0, 0}};
  c.switches = {
      crossing_switch(),
      {4194304, 16777216, 16777216, "parallel", "Ring/LL128", "Ring/Simple", 1.0 / 3, 40.5, 60, 40.5}};
  c.results.sizes = {8, 1048576, 4194304, 16777216};
  return p;
}

// A v2 profile whose all_reduce holds the switch entry `entry` (a flow map's inside), on line 6.
std::string with_switch(const std::string& entry) {
  return "schema: nccltune/profile/v2\nshape: {key: k, nodes: 1}\nenv: {}\ncollectives:\n"
         "  all_reduce:\n    switches: [{" +
         entry + "}]\n";
}

const std::string kSwitch =
    "lo: 1048576, hi: 1310720, bytes: 1152000, fit: crossing, below: Tree/LL128, above: Ring/LL128, "
    "below_latency_us: 5, below_gbps: 16, above_latency_us: 50, above_gbps: 42.7";

// kSwitch with `key`'s value replaced by `value` (the key left out when value is empty).
std::string switch_with(const std::string& key, const std::string& value) {
  std::string entry = kSwitch;
  const std::size_t at = entry.find(key + ": ");
  const std::size_t end = std::min(entry.find(", ", at), entry.size());
  if (value.empty()) {
    const std::size_t from = at == 0 ? 0 : at - 2, to = at == 0 ? end + 2 : end;
    entry.erase(from, to - from);
  } else {
    entry.replace(at, end - at, key + ": " + value);
  }
  return entry;
}

// The one-line error parse_profile gives for `text`.
std::string switch_rejection(const std::string& text) {
  Result<Profile> profile = parse_profile(text, "switches.yaml");
  EXPECT_FALSE(profile.ok()) << "accepted:\n" << text;
  if (profile.ok()) return {};
  EXPECT_EQ(profile.error().find('\n'), std::string::npos) << profile.error();
  return profile.error();
}

const std::string kSwitchAt = "switches.yaml:6: collectives.all_reduce.switches[0].";

}  // namespace

TEST(ProfileSwitches, WrittenAfterPerSizeAsFlowMapsAndReadBackExactly) {
  const Profile profile = profile_with_switches();
  const std::string yaml = profile_to_yaml(profile);
  EXPECT_NE(
      yaml.find(
          "      - {min_bytes: 16777216, max_bytes: 16777216, algo: \"Ring\", proto: \"Simple\", "
          "channels: 0}\n"
          "    switches:\n"
          "      - {lo: 1048576, hi: 1310720, bytes: 1152000, fit: \"crossing\", below: \"Tree/LL128\", "
          "above: \"Ring/LL128\", below_latency_us: 5, below_gbps: 16, above_latency_us: 50, "
          "above_gbps: 42.7}\n"
          "      - {lo: 4194304, hi: 16777216, bytes: 16777216, fit: \"parallel\", below: "
          "\"Ring/LL128\", above: \"Ring/Simple\", below_latency_us: 0.3333333333333333, "
          "below_gbps: 40.5, above_latency_us: 60, above_gbps: 40.5}\n"
          "    results:\n"),
      std::string::npos)
      << yaml;
  Result<Profile> back = parse_profile(yaml, "switches.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, profile);  // the fits bit for bit
  EXPECT_EQ(profile_to_yaml(*back), yaml);
}

TEST(ProfileSwitches, NotWrittenWhenThereAreNone) {
  Profile profile = profile_with_switches();
  profile.collectives["all_reduce"].switches.clear();
  EXPECT_EQ(profile_to_yaml(profile).find("switches"), std::string::npos);
}

TEST(ProfileSwitches, EachCommunicatorShapeHoldsItsOwn) {
  Profile profile = profile_with_switches();
  CommunicatorSection rail{2, 1, CommRole::rail, {}};
  rail.collectives["all_reduce"].switches = {crossing_switch()};
  profile.shapes = {rail};
  const std::string yaml = profile_to_yaml(profile);
  EXPECT_NE(yaml.find("\n        switches:\n          - {lo: 1048576, hi: 1310720, bytes: 1152000,"),
            std::string::npos)
      << yaml;
  Result<Profile> back = parse_profile(yaml, "v3.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, profile);
  // What a job reads keeps them (they are a few lines, beside per_size).
  Result<Profile> for_jobs = parse_profile(yaml, "v3.yaml", ProfileParts::for_jobs);
  ASSERT_TRUE(for_jobs.ok()) << for_jobs.error();
  EXPECT_EQ(for_jobs->shapes.at(0).collectives.at("all_reduce").switches,
            rail.collectives["all_reduce"].switches);

  std::string bad = yaml;
  bad.replace(bad.find("fit: \"crossing\"", bad.find("role: rail")), 15, "fit: \"close\"");
  Result<Profile> refused = parse_profile(bad, "v3.yaml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.error().find("communicators[1].collectives.all_reduce.switches[0].fit: unknown fit 'close'"),
      std::string::npos)
      << refused.error();
}

// The fixture is what the writer writes, and each switch agrees with its per_size ranges: the
// range above it starts at `bytes`, and the two ranges hold `below` and `above`.
TEST(ProfileSwitches, FixtureIsTheWritersOutputAndAgreesWithItsRanges) {
  const std::filesystem::path file = fixture("profiles/switches-2n.yaml");
  Result<Profile> profile = read_profile(file);
  ASSERT_TRUE(profile.ok()) << profile.error();
  test_support::expect_matches_file(file, profile_to_yaml(*profile));
  const CollectiveProfile& c = profile->collectives.at("all_reduce");
  ASSERT_EQ(c.switches.size(), 2u);
  EXPECT_EQ(c.switches[0].fit, "crossing");
  EXPECT_NE(c.switches[1].fit, "crossing");
  for (const SizeSwitch& s : c.switches) {
    const auto above = std::find_if(c.per_size.begin(), c.per_size.end(),
                                    [&](const SizeChoice& r) { return r.min_bytes == s.bytes; });
    ASSERT_NE(above, c.per_size.end()) << s.bytes;
    ASSERT_NE(above, c.per_size.begin()) << s.bytes;
    EXPECT_EQ(above->algo + "/" + above->proto, s.above);
    EXPECT_EQ(std::prev(above)->algo + "/" + std::prev(above)->proto, s.below);
    EXPECT_EQ(std::prev(above)->max_bytes, s.bytes - 1);
  }
  // The crossing is where the two fits meet: latency + bytes / bandwidth, GB/s as 1e3 bytes per us.
  const SizeSwitch& s = c.switches[0];
  const auto below = [&](double bytes) { return s.below_latency_us + bytes / (s.below_gbps * 1e3); };
  const auto above = [&](double bytes) { return s.above_latency_us + bytes / (s.above_gbps * 1e3); };
  const double bytes = static_cast<double>(s.bytes);
  EXPECT_LT(below(bytes - 1), above(bytes - 1));
  EXPECT_LE(above(bytes), below(bytes));
}

TEST(ProfileSwitches, AValidEntryReads) {
  Result<Profile> profile = parse_profile(with_switch(kSwitch), "switches.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error();
  EXPECT_EQ(profile->collectives.at("all_reduce").switches, std::vector<SizeSwitch>{crossing_switch()});
  // A fitted latency is a least-squares intercept, which noise may put below 0.
  EXPECT_TRUE(parse_profile(with_switch(switch_with("below_latency_us", "-1.5")), "x").ok());
  // Without a crossing the switch stays at hi, and a fit without bandwidth has 0.
  std::string flat = switch_with("fit", "no-bandwidth");
  flat.replace(flat.find("bytes: 1152000"), 14, "bytes: 1310720");
  flat.replace(flat.find("below_gbps: 16"), 14, "below_gbps: 0");
  EXPECT_TRUE(parse_profile(with_switch(flat), "x").ok()) << flat;
}

TEST(ProfileSwitches, EveryFieldIsRequiredAndNoOtherIsRead) {
  for (const char* key : {"lo", "hi", "bytes", "fit", "below", "above", "below_latency_us", "below_gbps",
                          "above_latency_us", "above_gbps"})
    EXPECT_EQ(switch_rejection(with_switch(switch_with(key, ""))), kSwitchAt + key + ": missing");
  EXPECT_EQ(switch_rejection(with_switch(kSwitch + ", why: fast")),
            "switches.yaml:6: collectives.all_reduce.switches[0]: unknown key 'why'");
  EXPECT_EQ(switch_rejection("schema: nccltune/profile/v2\nshape: {key: k, nodes: 1}\nenv: {}\ncollectives:\n"
                             "  all_reduce:\n    switches: {lo: 1}\n"),
            "switches.yaml:6: collectives.all_reduce.switches: must be a list");
}

TEST(ProfileSwitches, BracketAndCrossingMustAgree) {
  EXPECT_EQ(switch_rejection(with_switch(switch_with("hi", "1048576"))),
            kSwitchAt + "hi: must be above lo (1048576)");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("bytes", "1048576"))),
            kSwitchAt + "bytes: 1048576 is outside the bracket: a crossing is above lo and at most hi");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("bytes", "1310721"))),
            kSwitchAt + "bytes: 1310721 is outside the bracket: a crossing is above lo and at most hi");
  EXPECT_TRUE(parse_profile(with_switch(switch_with("bytes", "1310720")), "x").ok());
  EXPECT_EQ(
      switch_rejection(with_switch(switch_with("fit", "parallel"))),
      kSwitchAt +
          "bytes: 1152000 is not hi (1310720): without a crossing (fit parallel) the switch stays at the "
          "size measured");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("fit", "Crossing"))),
            kSwitchAt + "fit: unknown fit 'Crossing' (crossing, parallel, outside-bracket, no-bandwidth)");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("lo", "-1"))),
            kSwitchAt + "lo: must be a byte count (a whole number from 0)");
}

TEST(ProfileSwitches, NamesArePairsNcclKnows) {
  EXPECT_EQ(switch_rejection(with_switch(switch_with("below", "Tree"))),
            kSwitchAt + "below: 'Tree' is not algorithm/protocol (Ring/LL128)");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("below", "Tree/LL/LL"))),
            kSwitchAt + "below: 'Tree/LL/LL' is not algorithm/protocol (Ring/LL128)");
  EXPECT_EQ(
      switch_rejection(with_switch(switch_with("above", "Butterfly/LL"))),
      kSwitchAt +
          "above: 'Butterfly/LL' names no NCCL algorithm (Tree, Ring, CollNetDirect, CollNetChain, NVLS, "
          "NVLSTree, PAT)");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("above", "Ring/LL64"))),
            kSwitchAt + "above: 'Ring/LL64' names no NCCL protocol (LL, LL128, Simple)");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("above", "\"Tree/LL128\""))),
            kSwitchAt + "above: the same as below: a switch changes the choice");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("above", "[Ring]"))),
            kSwitchAt + "above: must be a string");
}

TEST(ProfileSwitches, FitsAreFiniteAndBandwidthsFromZero) {
  EXPECT_EQ(switch_rejection(with_switch(switch_with("below_latency_us", ".nan"))),
            kSwitchAt + "below_latency_us: must be a finite number");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("above_latency_us", ".inf"))),
            kSwitchAt + "above_latency_us: must be a finite number");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("below_gbps", "-16"))),
            kSwitchAt + "below_gbps: must be a finite number from 0");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("above_gbps", "fast"))),
            kSwitchAt + "above_gbps: must be a number");
  EXPECT_EQ(switch_rejection(with_switch(switch_with("above_gbps", "0"))),
            kSwitchAt + "above_gbps: 0 is only a no-bandwidth fit's (fit is crossing)");
}

TEST(ProfileSwitches, AscendingWithoutOverlap) {
  const std::string second =
      "lo: 4194304, hi: 16777216, bytes: 16777216, fit: outside-bracket, below: Ring/LL128, above: "
      "Ring/Simple, "
      "below_latency_us: 50, below_gbps: 42.7, above_latency_us: 30, above_gbps: 90";
  const std::string head =
      "schema: nccltune/profile/v2\nshape: {key: k, nodes: 1}\nenv: {}\ncollectives:\n"
      "  all_reduce:\n    switches:\n";
  // One bracket may start where the one before it ends.
  std::string adjacent = second;
  adjacent.replace(0, 11, "lo: 1310720");
  EXPECT_TRUE(parse_profile(head + "      - {" + kSwitch + "}\n      - {" + adjacent + "}\n", "x").ok());
  std::string overlapping = second;
  overlapping.replace(0, 11, "lo: 1310719");
  EXPECT_EQ(
      switch_rejection(head + "      - {" + kSwitch + "}\n      - {" + overlapping + "}\n"),
      "switches.yaml:8: collectives.all_reduce.switches[1].lo: overlaps or precedes the switch before it "
      "(whose hi is 1310720)");
  EXPECT_EQ(
      switch_rejection(head + "      - {" + second + "}\n      - {" + kSwitch + "}\n"),
      "switches.yaml:8: collectives.all_reduce.switches[1].lo: overlaps or precedes the switch before it "
      "(whose hi is 16777216)");
}
