// MNNVL profiles (GB200/GB300 NVL72): the shape in NCCL's terms (a node is an NVLink domain) with
// the hosts it spans. Round trips, HGX profiles written byte for byte as before, every shape rule
// refused with shape.hosts named, the store's <nodes>n<hosts>h.yaml names and the load check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "profile/profile.h"
#include "profile/profile_store.h"
#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

const std::string kRackKey = "gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28";

// 16 GPUs on 4 trays of one rack: NCCL's 1 node of 16 ranks.
Profile mnnvl_rack_profile(int domains = 1, int hosts = 4) {
  Profile p;
  p.shape.node_type_key = kRackKey;
  p.shape.nodes = domains;
  p.shape.gpus_per_node = hosts * 4 / domains;
  p.shape.ranks = hosts * 4;
  p.shape.hosts = hosts;
  p.shape.mnnvl = true;
  p.shape.gpu = "NVIDIA GB200";
  p.shape.nvswitch = true;
  p.env = {{"NCCL_PROTO", "LL128"}};
  CollectiveProfile c;
  c.measured = {8, 1048576};
  c.per_size = {{0, 1048576, "NVLS", "Simple", 0, 0}};
  p.collectives["all_reduce"] = c;
  CommunicatorSection node;  // one tray's 4 GPUs; on one rack also a rail (one rank per host)
  node.nodes = 1;
  node.ranks_per_node = 4;
  node.role = CommRole::node;
  node.collectives["all_reduce"] = c;
  p.shapes = {node};
  return p;
}

std::string mnnvl_rejection(const std::string& text) {
  Result<Profile> profile = parse_profile(text, "rack.yaml");
  EXPECT_FALSE(profile.ok()) << "accepted:\n" << text;
  if (profile.ok()) return {};
  EXPECT_EQ(profile.error().find('\n'), std::string::npos) << profile.error();
  return profile.error();
}

std::string mnnvl_shape_doc(const std::string& shape) {
  return "schema: nccltune/profile/v2\nshape: {key: k, " + shape + "}\nenv: {}\n";
}

}  // namespace

TEST(MnnvlProfile, RoundTripsWithHostsAndFlag) {
  const Profile p = mnnvl_rack_profile();
  const std::string yaml = profile_to_yaml(p);
  EXPECT_NE(yaml.find("  ranks: 16\n  hosts: 4\n  mnnvl: true\n"), std::string::npos) << yaml;
  Result<Profile> back = parse_profile(yaml, "rack.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(*back, p);
  EXPECT_EQ(back->shape.host_count(), 4);
  Result<Profile> for_jobs = parse_profile(yaml, "rack.yaml", ProfileParts::for_jobs);
  ASSERT_TRUE(for_jobs.ok()) << for_jobs.error();
  EXPECT_EQ(for_jobs->shape, p.shape);
}

TEST(MnnvlProfile, HostCountedProfilesWriteNeitherField) {
  Profile p = mnnvl_rack_profile();
  p.shape.mnnvl = false;
  p.shape.hosts = 0;
  p.shape.nodes = 4;
  p.shape.gpus_per_node = 4;
  p.shapes.clear();
  const std::string yaml = profile_to_yaml(p);
  EXPECT_NE(yaml.find("  ranks: 16\n  gpu: "), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("mnnvl:"), std::string::npos) << yaml;
  Result<Profile> back = parse_profile(yaml, "hgx.yaml");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->shape.hosts, 0);
  EXPECT_EQ(back->shape.host_count(), 4);
}

TEST(MnnvlProfile, HostsDefaultToNodes) {
  Result<Profile> plain = parse_profile(mnnvl_shape_doc("nodes: 2, gpus_per_node: 4, hosts: 2"), "p.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_FALSE(plain->shape.mnnvl);
  EXPECT_EQ(plain->shape.host_count(), 2);
  Result<Profile> rack = parse_profile(mnnvl_shape_doc("nodes: 2, gpus_per_node: 4, mnnvl: true"), "p.yaml");
  ASSERT_TRUE(rack.ok()) << rack.error();
  EXPECT_EQ(rack->shape.hosts, 2);
}

TEST(MnnvlProfile, ShapeRulesNameShapeHosts) {
  EXPECT_EQ(mnnvl_rejection(mnnvl_shape_doc("nodes: 4, gpus_per_node: 4, hosts: 2, mnnvl: true")),
            "rack.yaml:2: shape.hosts: 2 hosts cannot hold 4 NVLink domains");
  EXPECT_EQ(mnnvl_rejection(mnnvl_shape_doc("nodes: 2, gpus_per_node: 6, hosts: 3, mnnvl: true")),
            "rack.yaml:2: shape.hosts: 3 hosts do not make 2 NVLink domains of as many hosts each");
  EXPECT_EQ(mnnvl_rejection(mnnvl_shape_doc("nodes: 1, gpus_per_node: 18, hosts: 4, mnnvl: true")),
            "rack.yaml:2: shape.hosts: 18 ranks do not spread evenly over 4 hosts");
  EXPECT_EQ(mnnvl_rejection(mnnvl_shape_doc("nodes: 1, gpus_per_node: 16, hosts: 4")),
            "rack.yaml:2: shape.hosts: 4 hosts for 1 node needs mnnvl: true (only an NVLink domain spans hosts)");
  EXPECT_EQ(mnnvl_rejection(mnnvl_shape_doc("nodes: 1, gpus_per_node: 16, hosts: 0, mnnvl: true")).rfind(
                "rack.yaml:2: shape.hosts:", 0),
            0u);
  EXPECT_EQ(mnnvl_rejection(mnnvl_shape_doc("nodes: 1, gpus_per_node: 16, hosts: 4, mnnvl: yes")).rfind(
                "rack.yaml:2: shape.mnnvl:", 0),
            0u);
}

TEST(MnnvlProfile, RailIsOneRankPerHost) {
  // Two domains of 2 hosts x 4 GPUs: a rail (one rank per host) is NCCL's 2 nodes x 2 ranks.
  const std::string head =
      "schema: nccltune/profile/v3\n"
      "shape: {key: k, nodes: 2, gpus_per_node: 8, hosts: 4, mnnvl: true}\n"
      "env: {}\n"
      "communicators:\n"
      "  - {nodes: 2, ranks_per_node: 8, role: world}\n";
  Result<Profile> ok = parse_profile(head + "  - {nodes: 2, ranks_per_node: 2, role: rail}\n", "rack.yaml");
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(mnnvl_rejection(head + "  - {nodes: 2, ranks_per_node: 1, role: rail}\n"),
            "rack.yaml:6: communicators[1].ranks_per_node: a rail has one rank per host: 2 per NVLink domain of "
            "2 hosts");
}

TEST(MnnvlProfile, OneShapeIsOneSection) {
  // On one rack a rail (one rank per tray) and a node (one tray) are both NCCL's 1 node x 4.
  const std::string text =
      "schema: nccltune/profile/v3\n"
      "shape: {key: k, nodes: 1, gpus_per_node: 16, hosts: 4, mnnvl: true}\n"
      "env: {}\n"
      "communicators:\n"
      "  - {nodes: 1, ranks_per_node: 16, role: world}\n"
      "  - {nodes: 1, ranks_per_node: 4, role: node}\n"
      "  - {nodes: 1, ranks_per_node: 4, role: rail}\n";
  EXPECT_EQ(mnnvl_rejection(text), "rack.yaml:7: communicators[2]: 1 nodes x 4 ranks appears twice");
}

TEST(MnnvlStoreNames, DomainsAndHostsInTheName) {
  Profile p = mnnvl_rack_profile();
  EXPECT_EQ(profile_file_name(p.shape), "1n4h.yaml");
  EXPECT_EQ(profile_path("/store", p.shape), std::filesystem::path("/store") / kRackKey / "1n4h.yaml");
  EXPECT_EQ(profile_file_name(mnnvl_rack_profile(2, 4).shape), "2n4h.yaml");
  p.shape.mnnvl = false;
  p.shape.hosts = 0;
  EXPECT_EQ(profile_file_name(p.shape), "1n.yaml");

  EXPECT_EQ(parse_profile_file_name("1n4h.yaml"), (StoreFileName{1, 4}));
  EXPECT_EQ(parse_profile_file_name("2n4h.yaml"), (StoreFileName{2, 4}));
  EXPECT_EQ(parse_profile_file_name("16n.yaml"), (StoreFileName{16, 0}));
  for (const char* other : {"1n3h", "4n2h.yaml", "2n3h.yaml", "1n04h.yaml", "1nh.yaml", "1n4.yaml", "1n4hh.yaml",
                            "1n4H.yaml", "n4h.yaml", "1n-4h.yaml", "1n4h.yml"})
    EXPECT_FALSE(parse_profile_file_name(other).has_value()) << other;
  // The host-counted name alone is a node count.
  EXPECT_FALSE(profile_file_nodes("1n4h.yaml").has_value());
}

TEST(MnnvlStoreNames, ListedApartFromHostCountedOnes) {
  const TempDir scratch("nccltune-mnnvl-names");
  for (const char* name : {"1n4h.yaml", "2n4h.yaml", "1n.yaml", "2n.yaml", "notes.txt"})
    write_file(scratch.path() / name, "x\n");
  EXPECT_EQ(stored_profile_names(scratch.path()),
            (std::vector<StoreFileName>{{1, 0}, {1, 4}, {2, 0}, {2, 4}}));
  EXPECT_EQ(stored_node_counts(scratch.path()), (std::vector<int>{1, 2}));
}

TEST(MnnvlStoreNames, WrittenUnderTheNameAndLoadedBack) {
  const TempDir scratch("nccltune-mnnvl-write");
  std::filesystem::path written;
  ASSERT_TRUE(write_profile(scratch.path(), mnnvl_rack_profile(), &written).ok());
  EXPECT_EQ(written.filename(), "1n4h.yaml");
  const ProfileMatch match{written, 1, true, 4};
  Result<StoreProfile> loaded = load_matched_profile(scratch.path(), kRackKey, match, ::geteuid());
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->profile.shape.host_count(), 4);

  // The same file under another name is refused: a 1-domain profile must not serve 2 domains.
  const std::filesystem::path two = scratch.path() / kRackKey / "2n4h.yaml";
  std::filesystem::copy_file(written, two);
  std::filesystem::permissions(two, std::filesystem::perms(0644));
  Result<StoreProfile> moved = load_matched_profile(scratch.path(), kRackKey, {two, 2, true, 4}, ::geteuid());
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().find("2n4h.yaml: shape.nodes 1 does not match its file name"), std::string::npos)
      << moved.error();
  const std::filesystem::path eight = scratch.path() / kRackKey / "1n8h.yaml";
  std::filesystem::copy_file(written, eight);
  std::filesystem::permissions(eight, std::filesystem::perms(0644));
  Result<StoreProfile> hosts = load_matched_profile(scratch.path(), kRackKey, {eight, 1, true, 8}, ::geteuid());
  ASSERT_FALSE(hosts.ok());
  EXPECT_NE(hosts.error().find("1n8h.yaml: shape.hosts 4 does not match its file name"), std::string::npos)
      << hosts.error();
  const std::filesystem::path plain = scratch.path() / kRackKey / "1n.yaml";
  std::filesystem::copy_file(written, plain);
  std::filesystem::permissions(plain, std::filesystem::perms(0644));
  Result<StoreProfile> flat = load_matched_profile(scratch.path(), kRackKey, {plain, 1, true, 0}, ::geteuid());
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.error().find("1n.yaml: shape.mnnvl true does not match its file name"), std::string::npos)
      << flat.error();
}

// The fixtures other tests serve are what the writer writes, each under the name of its shape.
TEST(MnnvlStoreNames, FixtureStoreIsAsWritten) {
  const std::filesystem::path directory = test_support::fixture("store/" + kRackKey);
  EXPECT_EQ(stored_profile_names(directory), (std::vector<StoreFileName>{{1, 4}, {2, 4}, {2, 8}}));
  for (const StoreFileName& name : stored_profile_names(directory)) {
    ProfileShape shape;
    shape.nodes = name.nodes;
    shape.hosts = name.hosts;
    shape.mnnvl = true;
    const std::filesystem::path file = directory / profile_file_name(shape);
    Result<Profile> profile = read_profile(file);
    ASSERT_TRUE(profile.ok()) << profile.error();
    EXPECT_EQ(profile_file_name(profile->shape), file.filename().string());
    EXPECT_EQ(profile_to_yaml(*profile), test_support::read_file(file)) << file;
  }
  EXPECT_EQ(test_support::read_file(test_support::fixture("profiles/gb200-mnnvl-1n4h.yaml")),
            test_support::read_file(directory / "1n4h.yaml"));
}

// The sections tune writes, in NCCL's terms: on one rack a rail and a node are one shape.
TEST(MnnvlProfile, SectionShapesInNcclsTerms) {
  const ProfileShape rack = mnnvl_rack_profile().shape;  // 1 domain of 4 hosts x 4 GPUs
  EXPECT_EQ(nccl_shape_in(CommRole::world, rack), (Shape{CommRole::world, 1, 16}));
  EXPECT_EQ(nccl_shape_in(CommRole::node, rack), (Shape{CommRole::node, 1, 4}));
  EXPECT_EQ(nccl_shape_in(CommRole::rail, rack), (Shape{CommRole::rail, 1, 4}));
  const ProfileShape two = mnnvl_rack_profile(2, 4).shape;  // 2 domains of 2 hosts x 4 GPUs
  EXPECT_EQ(nccl_shape_in(CommRole::rail, two), (Shape{CommRole::rail, 2, 2}));
  EXPECT_EQ(nccl_shape_in(CommRole::node, two), (Shape{CommRole::node, 1, 4}));
  ProfileShape hgx;
  hgx.nodes = 2;
  hgx.gpus_per_node = 8;
  hgx.ranks = 16;
  for (const CommRole role : kCommRoles) EXPECT_EQ(nccl_shape_in(role, hgx), shape_in(role, 2, 8));
}
