// The fleet survey on racks of multi-node NVLink (GB200/GB300 NVL72): pairs inside one NVLink
// domain are NVLink pairs, held against NVLink pairs only; a tray slow on NVLink is told from one
// slow on its NIC; domains are named; and a fleet without domains (HGX) reads as it always did.
#include <gtest/gtest.h>

#include <set>

#include "fleet/fleet_attribution.h"
#include "fleet/fleet_output.h"
#include "fleet/nvlink_domains.h"
#include "fleet_test_support.h"

using namespace nccltune;
using nccltune::fleet_test::FleetTable;

namespace {

constexpr double kNvlink = 400, kNetwork = 42;

// Two racks of four trays (domains 0 and 1); every pair, NVLink ones at kNvlink, the others at
// kNetwork, times `slow(a, b)`.
FleetTable two_racks(std::function<double(int, int, bool)> slow) {
  FleetTable table;
  table.hosts_per_domain = 4;
  table.pair = [slow](int a, int b) {
    const bool nvlink = a / 4 == b / 4;
    return (nvlink ? kNvlink : kNetwork) * slow(a, b, nvlink);
  };
  return table;
}

const SuspectNode* rack_suspect(const FleetSurvey& survey, const std::string& node) {
  for (const SuspectNode& s : survey.suspects)
    if (s.node == node) return &s;
  return nullptr;
}

std::vector<std::string> rack_messages(const FleetSurvey& survey, const std::string& level) {
  std::vector<std::string> out;
  for (const FleetVerdict& v : survey.verdicts)
    if (v.level == level) out.push_back(v.message);
  return out;
}

}  // namespace

TEST(FleetRack, SlowNvlinkTrayIsToldFromSlowNicTray) {
  // gpu-a01's NVLink is slow (55-60% with each tray of its domain), its network fine; gpu-a06's
  // NIC is slow (60% with every tray of the other rack), its NVLink fine.
  const FleetTable table = two_racks([](int a, int b, bool nvlink) {
    if (nvlink && (a == 1 || b == 1)) return a == 0 ? 0.55 : b == 2 ? 0.58 : 0.60;
    if (!nvlink && (a == 6 || b == 6)) return 0.6;
    return 1.0;
  });
  const FleetSurvey survey = attribute(table.input());

  ASSERT_EQ(survey.suspects.size(), 2u);
  const SuspectNode* nvlink = rack_suspect(survey, "gpu-a01");
  ASSERT_NE(nvlink, nullptr);
  EXPECT_EQ(nvlink->path, "nvlink");
  EXPECT_EQ(nvlink->domain, "domain 0");
  EXPECT_EQ(nvlink->evidence, "3 of 3 NVLink pairs in domain 0 at 55-60% of the NVLink median");
  EXPECT_DOUBLE_EQ(nvlink->busbw_gbps, 232.0);
  EXPECT_DOUBLE_EQ(nvlink->median_gbps, kNvlink);
  const SuspectNode* nic = rack_suspect(survey, "gpu-a06");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->path, "network");
  EXPECT_EQ(nic->domain, "domain 1");
  EXPECT_EQ(nic->evidence, "4 of 4 network pairs at 60% of the network median");
  EXPECT_DOUBLE_EQ(nic->median_gbps, kNetwork);
  EXPECT_TRUE(survey.links.empty());
  EXPECT_EQ(
      rack_messages(survey, "fail"),
      (std::vector<std::string>{"gpu-a01 (domain 0) slow with every partner in its NVLink domain: 3 of 3 "
                                "NVLink pairs in domain 0 at 55-60% of the NVLink median (busbw 232.0 vs "
                                "400.0 GB/s)",
                                "gpu-a06 (domain 1) slow with every partner across the network: 4 of 4 "
                                "network pairs at 60% of the network median (busbw 25.2 vs 42.0 GB/s)"}));

  // Each path against its own median: no NVLink pair is slow for being above the network, no
  // network pair for being below NVLink.
  EXPECT_EQ(survey.nvlink_median_gbps, kNvlink);
  EXPECT_EQ(survey.pair_median_gbps, kNetwork);
  int nvlink_pairs = 0, slow = 0;
  for (const PairResult& pair : survey.pairs) {
    const bool crosses = (pair.nodes[0].back() < '4') != (pair.nodes[1].back() < '4');
    EXPECT_EQ(pair.path, crosses ? "network" : "nvlink") << pair.nodes[0] << " - " << pair.nodes[1];
    nvlink_pairs += pair.path == "nvlink";
    slow += pair.verdict == "slow";
  }
  EXPECT_EQ(nvlink_pairs, 12);
  EXPECT_EQ(slow, 3 + 4);
  for (const LocalResult& local : survey.local)
    EXPECT_EQ(local.domain, local.node < "gpu-a04" ? "domain 0" : "domain 1") << local.node;
  // The peak model between two nodes is the network's: the NVLink pairs are far above it, and
  // the network pairs at 84% are not below 80%.
  EXPECT_TRUE(rack_messages(survey, "warn").empty());
}

TEST(FleetRack, TraySlowOnBothPathsIsNamedByTheWorse) {
  const FleetTable table = two_racks([](int a, int b, bool nvlink) {
    if (a == 2 || b == 2) return nvlink ? 0.7 : 0.5;
    return 1.0;
  });
  const FleetSurvey survey = attribute(table.input());
  ASSERT_EQ(survey.suspects.size(), 1u);
  EXPECT_EQ(survey.suspects[0].path, "network");
  EXPECT_EQ(
      survey.suspects[0].evidence,
      "4 of 4 network pairs at 50% of the network median; also 3 of 3 NVLink pairs in domain 0 at 70% of "
      "the NVLink median");
}

TEST(FleetRack, SlowAloneStaysLocalAndTheNicIsStillFound) {
  // The integration test's rack: 4 trays in 2 domains of 2. gpu-a01 is slow alone (its GPUs),
  // and so in its NVLink pair; gpu-a02's NIC is slow: fine alone and on NVLink.
  FleetTable table;
  table.nodes = 4;
  table.rounds = 3;
  table.hosts_per_domain = 2;
  table.busbw = [](int node) { return node == 1 ? 190.0 : 380.0; };
  table.pair = [](int a, int b) {
    if (a / 2 == b / 2) return a == 0 ? kNvlink * 0.5 : kNvlink;
    return b == 2 || a == 2 ? kNetwork * 0.5 : kNetwork;
  };
  const FleetSurvey survey = attribute(table.input());
  ASSERT_EQ(survey.suspects.size(), 2u);
  EXPECT_EQ(survey.suspects[0].node, "gpu-a01");
  EXPECT_EQ(survey.suspects[0].path, "local");
  EXPECT_EQ(survey.suspects[0].domain, "domain 0");
  EXPECT_EQ(survey.suspects[1].node, "gpu-a02");
  EXPECT_EQ(survey.suspects[1].path, "network");
  EXPECT_EQ(survey.suspects[1].domain, "domain 1");
  EXPECT_EQ(survey.suspects[1].evidence, "2 of 2 network pairs at 67% of the network median");
  EXPECT_TRUE(survey.links.empty());  // the slow NVLink pair is gpu-a01's
  EXPECT_TRUE(rack_messages(survey, "warn").empty());
}

TEST(FleetRack, SlowNvlinkPairInADomainOfTwoIsAWarningNotALink) {
  FleetTable table;
  table.nodes = 4;
  table.rounds = 3;
  table.hosts_per_domain = 2;
  table.pair = [](int a, int b) { return a / 2 != b / 2 ? kNetwork : a == 0 ? kNvlink * 0.5 : kNvlink; };
  const FleetSurvey survey = attribute(table.input());
  EXPECT_TRUE(survey.suspects.empty());
  EXPECT_TRUE(survey.links.empty());
  EXPECT_EQ(
      rack_messages(survey, "warn"),
      (std::vector<std::string>{"gpu-a00 - gpu-a01 slow together (67% of the NVLink median), but gpu-a00 "
                                "ran no other NVLink pair: more rounds (or a domain of 3 or more nodes) are "
                                "needed to tell the node from the link"}));
}

TEST(FleetRack, SlowNvlinkLinkInsideADomain) {
  const FleetTable table = two_racks([](int a, int b, bool) { return a == 4 && b == 5 ? 0.5 : 1.0; });
  const FleetSurvey survey = attribute(table.input());
  EXPECT_TRUE(survey.suspects.empty());
  ASSERT_EQ(survey.links.size(), 1u);
  EXPECT_EQ(survey.links[0].nodes, (std::array<std::string, 2>{"gpu-a04", "gpu-a05"}));
  EXPECT_EQ(
      survey.links[0].evidence,
      "slow only together over NVLink: 50% of the NVLink median; both at 100% with other NVLink partners");
}

TEST(FleetRack, AWholeDomainSlowOnTheNetworkIsSaidSo) {
  // Three racks of three; rack 2's uplinks are slow: each of its trays with every tray outside.
  FleetTable table;
  table.nodes = 9;
  table.rounds = 9;
  table.hosts_per_domain = 3;
  table.pair = [](int a, int b) {
    if (a / 3 == b / 3) return kNvlink;
    return a / 3 == 2 || b / 3 == 2 ? kNetwork * 0.5 : kNetwork;
  };
  const FleetSurvey survey = attribute(table.input());
  ASSERT_EQ(survey.suspects.size(), 3u);
  for (const SuspectNode& s : survey.suspects) {
    EXPECT_EQ(s.path, "network") << s.node;
    EXPECT_EQ(s.domain, "domain 2") << s.node;
  }
  const std::vector<std::string> fails = rack_messages(survey, "fail");
  ASSERT_EQ(fails.size(), 4u);
  EXPECT_EQ(
      fails[3],
      "domain 2 slow on the network as a whole: all 3 of its nodes (gpu-a06, gpu-a07, gpu-a08) slow with "
      "every partner outside it (its uplinks or switch rather than one node's NIC)");
}

TEST(FleetRack, DomainsAreNamedByCliqueWhenEachHasItsOwn) {
  FleetTable table = two_racks([](int, int, bool) { return 1.0; });
  table.cliques = [](int domain) { return static_cast<std::uint32_t>(0x7ff0 + domain); };
  const FleetSurvey survey = attribute(table.input());
  EXPECT_EQ(survey.local[0].domain, "clique 0x7ff0");
  EXPECT_EQ(survey.local[7].domain, "clique 0x7ff1");

  // Two racks (two fabric UUIDs) that both print the default clique id: named by number.
  table.cliques = [](int) { return std::uint32_t{0x7ffe}; };
  const FleetSurvey same = attribute(table.input());
  EXPECT_EQ(same.local[0].domain, "domain 0");
  EXPECT_EQ(same.local[7].domain, "domain 1");
}

TEST(FleetRack, NodesOfOneFabricShareADomainWithoutAPairBetweenThem) {
  // Two rounds: the only NVLink pairs are gpu-a02 - gpu-a03 and gpu-a05 - gpu-a07; only their
  // fabric joins the other trays to them.
  FleetTable table = two_racks([](int, int, bool) { return 1.0; });
  table.rounds = 2;
  const FleetInput by_pairs = table.input();
  const NvlinkDomains apart = nvlink_domains(by_pairs.hosts.size(), by_pairs.local, by_pairs.pairs);
  EXPECT_EQ(apart.of_node, (std::vector<int>{0, 1, 2, 2, 3, 4, 5, 4}));
  EXPECT_EQ(apart.name_of(7), "domain 4");

  table.cliques = [](int domain) { return static_cast<std::uint32_t>(domain + 1); };
  const FleetInput input = table.input();
  const NvlinkDomains domains = nvlink_domains(input.hosts.size(), input.local, input.pairs);
  ASSERT_TRUE(domains.known());
  EXPECT_EQ(domains.names, (std::vector<std::string>{"clique 0x1", "clique 0x2"}));
  EXPECT_EQ(domains.of_node, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));

  // One round: every pair crossed the network; no domain is known, whatever the fabrics say.
  table.rounds = 1;
  const FleetInput across = table.input();
  EXPECT_FALSE(nvlink_domains(across.hosts.size(), across.local, across.pairs).known());
}

TEST(FleetRack, WithoutNvlinkPairsNothingChanges) {
  // An HGX fleet: no account read, or NCCL counting two nodes without MNNVL on every pair, or
  // nodes that print a fabric of their own (NVSwitch systems): every pair is a network pair, and
  // the survey is the one it always was.
  FleetTable hgx;
  hgx.pair = [](int a, int b) { return a == 3 || b == 3 ? kNetwork * 0.6 : kNetwork; };
  const FleetSurvey plain = attribute(hgx.input());
  FleetInput counted = hgx.input();
  for (GroupSample& pair : counted.pairs) {
    pair.nccl_nodes = 2;
    pair.mnnvl = false;
  }
  for (GroupSample& local : counted.local) {
    local.nccl_nodes = 1;
    local.mnnvl = false;
    local.fabric_uuid = "1.2";
    local.clique_id = 0x7fff;
  }
  EXPECT_EQ(attribute(counted), plain);
  EXPECT_FALSE(plain.nvlink_median_gbps);
  ASSERT_EQ(plain.suspects.size(), 1u);
  EXPECT_EQ(plain.suspects[0].path, "network");
  EXPECT_EQ(plain.suspects[0].domain, "");
  EXPECT_EQ(plain.suspects[0].evidence, "7 of 7 pairs at 60% of median");
  for (const PairResult& pair : plain.pairs) EXPECT_EQ(pair.path, "network");
  for (const LocalResult& local : plain.local) EXPECT_EQ(local.domain, "");
  const nlohmann::json json = fleet_to_json(plain);
  EXPECT_FALSE(json["local"][0].contains("domain"));
  EXPECT_FALSE(json["suspects"][0].contains("domain"));
  EXPECT_FALSE(json["median_busbw_gbps"].contains("nvlink"));
}

TEST(FleetRack, JsonSaysPathsAndDomainsAndReadsBack) {
  const FleetTable table = two_racks([](int a, int b, bool nvlink) {
    return nvlink && (a == 1 || b == 1) ? 0.5 : !nvlink && (a == 6 || b == 6) ? 0.6 : 1.0;
  });
  const FleetSurvey survey = attribute(table.input());
  const nlohmann::json json = fleet_to_json(survey);
  EXPECT_EQ(json["local"][5]["domain"], "domain 1");
  EXPECT_EQ(json["median_busbw_gbps"]["nvlink"], kNvlink);
  EXPECT_EQ(json["median_busbw_gbps"]["pairs"], kNetwork);
  std::set<std::string> paths;
  for (const auto& pair : json["pairs"]) paths.insert(pair["path"].get<std::string>());
  EXPECT_EQ(paths, (std::set<std::string>{"network", "nvlink"}));
  EXPECT_EQ(json["suspects"][0]["path"], "nvlink");
  EXPECT_EQ(json["suspects"][0]["domain"], "domain 0");

  const Result<FleetSurvey> parsed = parse_fleet_json(json.dump(2), "fleet.json");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(*parsed, survey);

  // A survey written before racks (no "path"): every pair reads as a network pair.
  nlohmann::json older = json;
  for (auto& pair : older["pairs"]) pair.erase("path");
  const Result<FleetSurvey> old_parsed = parse_fleet_json(older.dump(), "fleet.json");
  ASSERT_TRUE(old_parsed.ok()) << old_parsed.error();
  for (const PairResult& pair : old_parsed->pairs) EXPECT_EQ(pair.path, "network");
}

TEST(FleetRack, TextShowsDomainsAndEachPathsPairs) {
  const FleetTable table =
      two_racks([](int a, int b, bool nvlink) { return nvlink && (a == 1 || b == 1) ? 0.5 : 1.0; });
  const std::string text = render_fleet_text(attribute(table.input()));
  EXPECT_NE(text.find("\nNVLink domains: pairs inside one ran over NVLink (median 400.0 GB/s), pairs across domains "
                      "over the network (median 42.0 GB/s)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "node     domain    local busbw  % of peak  nvlink busbw  network busbw  verdict  evidence\n"
          "gpu-a01  domain 0  380.0        84.4       200.0         42.0           slow     nvlink: 3 of "
          "3 NVLink pairs in domain 0 at 50% of the NVLink median\n"),
      std::string::npos)
      << text;
}
