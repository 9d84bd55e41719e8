// Profile schema v3: one section per communicator shape (world, rail, node) and the settings
// withheld from env. Round trips, v2 left byte for byte as it was, every reader rule refused with
// its field named, and what jobs read (ProfileParts::for_jobs) of a v3 profile.
#include <gtest/gtest.h>

#include <algorithm>

#include "profile/profile.h"
#include "test_files.h"

using namespace nccltune;

namespace {

CollectiveProfile v3_collective(double scale) {
  CollectiveProfile c;
  c.measured = {8, 1048576};
  c.per_size = {{0, 65535, "Tree", "LL", 0, 0}, {65536, 1048576, "Ring", "Simple", 16, 262144}};
  c.results.sizes = {8, 65536, 1048576};
  c.results.baseline = {0.01 * scale, 10.5 * scale, 90.25 * scale};
  c.results.tuned = {0.011 * scale, 11 * scale, 99.5 * scale};
  c.results.speedup_geomean = 1.07;
  c.results.worst_size_ratio = 1;
  c.results.peak_bottleneck = "network";
  return c;
}

Profile v3_profile() {
  Profile p;
  p.shape.node_type_key = "h100.8gpu";
  p.shape.nodes = 2;
  p.shape.gpus_per_node = 8;
  p.shape.ranks = 16;
  p.env = {{"NCCL_NET_GDR_LEVEL", "SYS"}};
  p.collectives["all_reduce"] = v3_collective(1);
  p.collectives["all_gather"] = v3_collective(0.5);
  p.collectives["all_gather"].guard = true;
  CommunicatorSection rail;
  rail.nodes = 2;
  rail.ranks_per_node = 1;
  rail.role = CommRole::rail;
  rail.collectives["all_reduce"] = v3_collective(0.25);
  CommunicatorSection node;
  node.nodes = 1;
  node.ranks_per_node = 8;
  node.role = CommRole::node;
  node.collectives["all_reduce"] = v3_collective(3);
  node.collectives["all_reduce"].plugin = {PluginStatus::slower, "0.97x"};
  p.shapes = {rail, node};
  p.withheld = {{{{"NCCL_BUFFSIZE", "8388608"}}, "rail (2 nodes x 1): all_reduce -20% at 1M"}};
  p.provenance.tool = "nccltune test";
  p.notes = {"a note"};
  return p;
}

// The error parse_profile gives for `text`, which must be one line naming v3.yaml.
std::string v3_rejection(const std::string& text) {
  Result<Profile> profile = parse_profile(text, "v3.yaml");
  EXPECT_FALSE(profile.ok()) << "accepted:\n" << text;
  if (profile.ok()) return {};
  EXPECT_EQ(profile.error().find('\n'), std::string::npos) << profile.error();
  // for_jobs refuses it just the same (these errors are all in parts jobs read).
  Result<Profile> skimmed = parse_profile(text, "v3.yaml", ProfileParts::for_jobs);
  EXPECT_FALSE(skimmed.ok());
  if (!skimmed.ok()) {
    EXPECT_EQ(skimmed.error(), profile.error());
  }
  return profile.error();
}

const std::string kV3Head =
    "schema: nccltune/profile/v3\n"                  // 1
    "shape: {key: k, nodes: 2, gpus_per_node: 8}\n"  // 2
    "env: {}\n";                                     // 3
const std::string kWorld = "  - {nodes: 2, ranks_per_node: 8, role: world}\n";

// What a job needs of a profile, every section's.
Profile v3_job_parts(Profile profile) {
  profile.provenance = {};
  profile.failed.clear();
  profile.notes.clear();
  for (auto& [op, collective] : profile.collectives) collective.results = {};
  for (CommunicatorSection& section : profile.shapes)
    for (auto& [op, collective] : section.collectives) collective.results = {};
  return profile;
}

}  // namespace

TEST(ProfileV3, RoundTripsThroughItsText) {
  const Profile profile = v3_profile();
  const std::string yaml = profile_to_yaml(profile);
  EXPECT_EQ(yaml.rfind("schema: nccltune/profile/v3\n", 0), 0u) << yaml;
  EXPECT_EQ(yaml.find("\ncollectives:"), std::string::npos) << "v3 has no top-level collectives";
  Result<Profile> parsed = parse_profile(yaml, "v3.yaml");
  ASSERT_TRUE(parsed) << parsed.error() << "\n" << yaml;
  EXPECT_EQ(*parsed, profile);
  EXPECT_EQ(profile_to_yaml(*parsed), yaml);
}

TEST(ProfileV3, WritesTheAgreedLayout) {
  Profile p;
  p.shape.node_type_key = "k";
  p.shape.nodes = 2;
  p.shape.gpus_per_node = 8;
  p.shape.ranks = 16;
  p.env = {{"NCCL_NET_GDR_LEVEL", "SYS"}};
  p.collectives["all_reduce"].per_size = {{0, 1023, "Ring", "LL", 0, 0}};
  p.shapes.push_back({2, 1, CommRole::rail, {}});
  p.withheld = {{{{"NCCL_BUFFSIZE", "8388608"}}, "rail\tlost"}};
  const std::string yaml = profile_to_yaml(p);
  const std::size_t from = yaml.find("keep_defaults:"), to = yaml.find("provenance:");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(yaml.substr(from, to - from),
            "keep_defaults: false\n"
            "env:\n"
            "  NCCL_NET_GDR_LEVEL: \"SYS\"\n"
            "withheld:\n"
            "  - {env: {NCCL_BUFFSIZE: \"8388608\"}, why: \"rail lost\"}\n"
            "communicators:\n"
            "  - nodes: 2\n"
            "    ranks_per_node: 8\n"
            "    role: world\n"
            "    collectives:\n"
            "      all_reduce:\n"
            "        per_size:\n"
            "          - {min_bytes: 0, max_bytes: 1023, algo: \"Ring\", proto: \"LL\", channels: 0}\n"
            "        results:\n"
            "          sizes: []\n"
            "          baseline: []\n"
            "          tuned: []\n"
            "          speedup_geomean: 1\n"
            "          worst_size_ratio: 1\n"
            "  - nodes: 2\n"
            "    ranks_per_node: 1\n"
            "    role: rail\n"
            "    collectives: {}\n");
  Result<Profile> parsed = parse_profile(yaml, "v3.yaml");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->withheld.at(0).why, "rail lost");  // free text cleaned as elsewhere
}

TEST(ProfileV3, AV2ProfileStaysV2ByteForByte) {
  const std::string text = test_support::read_file(test_support::fixture("report/collectives/2n.yaml"));
  ASSERT_EQ(text.rfind("schema: nccltune/profile/v2\n", 0), 0u);
  Result<Profile> parsed = parse_profile(text, "2n.yaml");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_TRUE(parsed->shapes.empty());
  EXPECT_TRUE(parsed->withheld.empty());
  EXPECT_FALSE(parsed->collectives.empty()) << "a v2 profile reads as its world section";
  EXPECT_EQ(profile_to_yaml(*parsed), text);

  // A v3 file that measured the world alone is the same profile, and is written as v2.
  Profile world_only = v3_profile();
  world_only.shapes.clear();
  world_only.withheld.clear();
  std::string v3 = profile_to_yaml(v3_profile());
  const std::size_t rail = v3.find("  - nodes: 2\n    ranks_per_node: 1\n");
  const std::size_t provenance = v3.find("provenance:\n");
  const std::size_t withheld = v3.find("withheld:\n"), communicators = v3.find("communicators:\n");
  ASSERT_TRUE(rail != std::string::npos && provenance != std::string::npos && withheld < communicators);
  v3.erase(rail, provenance - rail);
  v3.erase(withheld, communicators - withheld);
  Result<Profile> read = parse_profile(v3, "v3.yaml");
  ASSERT_TRUE(read) << read.error() << "\n" << v3;
  EXPECT_EQ(*read, world_only);
  EXPECT_EQ(profile_to_yaml(*read).rfind("schema: nccltune/profile/v2\n", 0), 0u);
}

TEST(ProfileV3, CommRoleNames) {
  for (CommRole role : {CommRole::world, CommRole::rail, CommRole::node})
    EXPECT_EQ(parse_comm_role(to_string(role)), role);
  EXPECT_FALSE(parse_comm_role("World"));
  EXPECT_FALSE(parse_comm_role(""));
  EXPECT_EQ(describe_section({2, 1, CommRole::rail, {}}), "rail: 2 nodes x 1 rank");
  EXPECT_EQ(describe_section({1, 8, CommRole::node, {}}), "node: 1 node x 8 ranks");
}

TEST(ProfileV3, ReaderRulesNameTheField) {
  const auto with = [](const std::string& communicators) {
    return v3_rejection(kV3Head + "communicators:\n" + kWorld + communicators);
  };
  EXPECT_EQ(v3_rejection(kV3Head),
            "v3.yaml:1: communicators: missing (v3 holds the world's collectives there)");
  EXPECT_EQ(v3_rejection(kV3Head + "collectives: {}\ncommunicators:\n" + kWorld),
            "v3.yaml:4: unknown key 'collectives'");
  EXPECT_EQ(v3_rejection(kV3Head + "per_size: []\ncommunicators:\n" + kWorld),
            "v3.yaml:4: unknown key 'per_size'");
  EXPECT_EQ(v3_rejection(kV3Head + "communicators: {}\n"), "v3.yaml:4: communicators: must be a list");
  EXPECT_EQ(v3_rejection(kV3Head + "communicators: []\n"),
            "v3.yaml:4: communicators: no entry with role: world");
  EXPECT_EQ(v3_rejection(kV3Head + "communicators:\n  - {nodes: 2, ranks_per_node: 1, role: rail}\n"),
            "v3.yaml:5: communicators: no entry with role: world");
  EXPECT_EQ(with("  - {nodes: 2, ranks_per_node: 8, role: world}\n"),
            "v3.yaml:6: communicators[1].role: a second world");
  EXPECT_EQ(v3_rejection(kV3Head + "communicators:\n  - {nodes: 1, ranks_per_node: 8, role: world}\n"),
            "v3.yaml:5: communicators[0].nodes: the world's is shape.nodes (2)");
  EXPECT_EQ(v3_rejection(kV3Head + "communicators:\n  - {nodes: 2, ranks_per_node: 4, role: world}\n"),
            "v3.yaml:5: communicators[0].ranks_per_node: the world's is shape.ranks / shape.nodes (8)");
  EXPECT_EQ(with("  - {nodes: 2, ranks_per_node: 8, role: node}\n"),
            "v3.yaml:6: communicators[1].nodes: a node section has 1 node");
  EXPECT_EQ(with("  - {nodes: 2, ranks_per_node: 2, role: rail}\n"),
            "v3.yaml:6: communicators[1].ranks_per_node: a rail has one rank per node");
  EXPECT_EQ(
      with("  - {nodes: 1, ranks_per_node: 1, role: rail}\n  - {nodes: 1, ranks_per_node: 1, role: node}\n"),
      "v3.yaml:7: communicators[2]: 1 nodes x 1 ranks appears twice");
  EXPECT_EQ(with("  - {nodes: 0, ranks_per_node: 1, role: rail}\n"),
            "v3.yaml:6: communicators[1].nodes: 0 is outside 1..2");
  EXPECT_EQ(with("  - {nodes: 3, ranks_per_node: 1, role: rail}\n"),
            "v3.yaml:6: communicators[1].nodes: 3 is outside 1..2");
  EXPECT_EQ(with("  - {nodes: 1, ranks_per_node: 9, role: node}\n"),
            "v3.yaml:6: communicators[1].ranks_per_node: 9 is outside 1..8");
  EXPECT_EQ(with("  - {nodes: 1, ranks_per_node: 1.5, role: node}\n"),
            "v3.yaml:6: communicators[1].ranks_per_node: must be a whole number");
  EXPECT_EQ(with("  - {nodes: \"1\", ranks_per_node: 2, role: node}\n"),
            "v3.yaml:6: communicators[1].nodes: must be a whole number");
  EXPECT_EQ(with("  - {nodes: 1, role: node}\n"), "v3.yaml:6: communicators[1].ranks_per_node: missing");
  EXPECT_EQ(with("  - {nodes: 1, ranks_per_node: 2}\n"), "v3.yaml:6: communicators[1].role: missing");
  EXPECT_EQ(with("  - {nodes: 1, ranks_per_node: 2, role: tensor}\n"),
            "v3.yaml:6: communicators[1].role: unknown role 'tensor' (world, rail, node)");
  EXPECT_EQ(with("  - {nodes: 1, ranks_per_node: 2, role: node, ranks: 2}\n"),
            "v3.yaml:6: communicators[1]: unknown key 'ranks'");
  EXPECT_EQ(
      with("  - nodes: 1\n    ranks_per_node: 2\n    role: node\n    collectives:\n      all_to_all: {}\n"),
      "v3.yaml:10: communicators[1].collectives: unknown collective 'all_to_all' (all_reduce, all_gather, "
      "reduce_scatter, alltoall, broadcast, reduce)");
  EXPECT_EQ(with("  - nodes: 1\n    ranks_per_node: 2\n    role: node\n    collectives:\n      all_reduce:\n"
                 "        per_size: [{min_bytes: 9, max_bytes: 8}]\n"),
            "v3.yaml:11: communicators[1].collectives.all_reduce.per_size[0].max_bytes: below min_bytes");
  EXPECT_EQ(with("  - 7\n"), "v3.yaml:6: communicators[1]: must be a map");

  // withheld: a list of {env, why}.
  const auto withheld = [](const std::string& entries) {
    return v3_rejection(kV3Head + "withheld:\n" + entries + "communicators:\n" + kWorld);
  };
  EXPECT_EQ(withheld("  - {why: x}\n"), "v3.yaml:5: withheld[0].env: missing");
  EXPECT_EQ(withheld("  - {env: {NCCL_BUFFSIZE: \"1\"}}\n"), "v3.yaml:5: withheld[0].why: missing");
  EXPECT_EQ(withheld("  - {env: {}, why: x}\n"), "v3.yaml:5: withheld[0].env: names no setting");
  EXPECT_EQ(withheld("  - {env: {LD_PRELOAD: \"x\"}, why: x}\n"),
            "v3.yaml:5: withheld[0].env: name 'LD_PRELOAD' does not match ^NCCL_[A-Z0-9_]+$");
  EXPECT_EQ(withheld("  - {env: {NCCL_BUFFSIZE: \"1 2\"}, why: x}\n")
                .rfind("v3.yaml:5: withheld[0].env.NCCL_BUFFSIZE: '1 2' has characters outside", 0),
            0u);
  EXPECT_EQ(withheld("  - {env: {NCCL_NET_GDR_LEVEL: \"sys\"}, why: x}\n")
                .rfind("v3.yaml:5: withheld[0].env.NCCL_NET_GDR_LEVEL: ", 0),
            0u);
  EXPECT_EQ(withheld("  - {env: {NCCL_BUFFSIZE: \"1\"}, why: [x]}\n"),
            "v3.yaml:5: withheld[0].why: must be a string");
  EXPECT_EQ(withheld("  - {env: {NCCL_BUFFSIZE: \"1\"}, why: \"a\\tb\"}\n")
                .rfind("v3.yaml:5: withheld[0].why: ", 0),
            0u);
  EXPECT_EQ(withheld("  - {env: {NCCL_BUFFSIZE: \"1\"}, why: x, won: rail}\n"),
            "v3.yaml:5: withheld[0]: unknown key 'won'");
  EXPECT_EQ(v3_rejection(kV3Head + "withheld: {}\ncommunicators:\n" + kWorld),
            "v3.yaml:4: withheld: must be a list");

  // v2 knows neither key.
  EXPECT_EQ(
      v3_rejection("schema: nccltune/profile/v2\nshape: {key: k, nodes: 2}\nenv: {}\ncommunicators: []\n"),
      "v3.yaml:4: unknown key 'communicators'");
  EXPECT_EQ(v3_rejection("schema: nccltune/profile/v2\nshape: {key: k, nodes: 2}\nenv: {}\nwithheld: []\n"),
            "v3.yaml:4: unknown key 'withheld'");
}

TEST(ProfileV3, ASingleNodeWorldLeavesNoRoomForANodeSection) {
  const std::string head =
      "schema: nccltune/profile/v3\nshape: {key: k, nodes: 1, gpus_per_node: 4}\nenv: {}\n";
  Result<Profile> ok = parse_profile(head +
                                         "communicators:\n  - {nodes: 1, ranks_per_node: 4, role: world}\n"
                                         "  - {nodes: 1, ranks_per_node: 2, role: node}\n",
                                     "v3.yaml");
  ASSERT_TRUE(ok) << ok.error();
  ASSERT_EQ(ok->shapes.size(), 1u);
  EXPECT_EQ(ok->shapes[0], (CommunicatorSection{1, 2, CommRole::node, {}}));
  EXPECT_EQ(v3_rejection(head + "communicators:\n  - {nodes: 1, ranks_per_node: 4, role: world}\n"
                                "  - {nodes: 1, ranks_per_node: 4, role: node}\n"),
            "v3.yaml:6: communicators[1]: 1 nodes x 4 ranks appears twice");
}

TEST(ProfileV3, ForJobsGivesWhatTheWholeParseGivesAJob) {
  const std::string text = profile_to_yaml(v3_profile());
  Result<Profile> whole = parse_profile(text, "v3.yaml");
  Result<Profile> skimmed = parse_profile(text, "v3.yaml", ProfileParts::for_jobs);
  ASSERT_TRUE(whole) << whole.error();
  ASSERT_TRUE(skimmed) << skimmed.error();
  EXPECT_EQ(*skimmed, v3_job_parts(*whole));
  EXPECT_EQ(skimmed->withheld, whole->withheld);
  ASSERT_EQ(skimmed->shapes.size(), 2u);
  EXPECT_EQ(skimmed->shapes[1].collectives.at("all_reduce").per_size,
            whole->shapes[1].collectives.at("all_reduce").per_size);

  // Each section's results are skipped, lines kept.
  const std::optional<std::string> kept = profile_text_for_jobs(text);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->find("results:"), std::string::npos) << *kept;
  EXPECT_EQ(kept->find("baseline"), std::string::npos) << *kept;
  EXPECT_EQ(std::count(kept->begin(), kept->end(), '\n'), std::count(text.begin(), text.end(), '\n'));

  // An error in a part jobs read names the same line either way.
  std::string broken = text;
  broken.replace(broken.find("role: node"), 10, "role: nod2");
  Result<Profile> whole_broken = parse_profile(broken, "v3.yaml");
  Result<Profile> skimmed_broken = parse_profile(broken, "v3.yaml", ProfileParts::for_jobs);
  ASSERT_FALSE(whole_broken);
  ASSERT_FALSE(skimmed_broken);
  EXPECT_EQ(skimmed_broken.error(), whole_broken.error());
}

TEST(ProfileV3, ForJobsReadsWhateverTheWholeParseReads) {
  // Laid out otherwise than profile_to_yaml does (items at column 0, results in flow style and
  // deeper): nothing is skipped that a job needs, and the result is still the job's parts.
  const std::string text = kV3Head +
                           "communicators:\n"
                           "- nodes: 2\n"
                           "  ranks_per_node: 8\n"
                           "  role: world\n"
                           "  collectives:\n"
                           "    all_reduce:\n"
                           "      results: {sizes: [8], baseline: [1], tuned: [2]}\n"
                           "      per_size: [{min_bytes: 0, max_bytes: 8, algo: Ring}]\n"
                           "- nodes: 2\n"
                           "  ranks_per_node: 1\n"
                           "  role: rail\n"
                           "  collectives:\n"
                           "      all_gather:\n"
                           "        results:\n"
                           "          sizes: [8]\n"
                           "        per_size: [{min_bytes: 0, max_bytes: 8, proto: LL}]\n";
  Result<Profile> whole = parse_profile(text, "v3.yaml");
  Result<Profile> skimmed = parse_profile(text, "v3.yaml", ProfileParts::for_jobs);
  ASSERT_TRUE(whole) << whole.error();
  ASSERT_TRUE(skimmed) << skimmed.error();
  EXPECT_EQ(v3_job_parts(*skimmed), v3_job_parts(*whole));
  EXPECT_EQ(skimmed->shapes.at(0).collectives.at("all_gather").per_size.at(0).proto, "LL");
}
