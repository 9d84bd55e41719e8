// `check`'s NVLink fabric verdicts: registration, health and one domain per node.
#include "topology/check_fabric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace nccltune;

namespace {

constexpr const char* kRack = "5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56";

GpuFabric registered(const std::string& cluster = kRack, std::uint32_t clique = 32766) {
  GpuFabric fabric;
  fabric.state = FabricState::completed;
  fabric.status = "Success";
  fabric.cluster_uuid = cluster;
  fabric.clique_id = clique;
  fabric.health_mask = 0xaa;
  return fabric;
}

NodeTopology tray(const std::vector<std::optional<GpuFabric>>& fabrics) {
  NodeTopology topology;
  for (std::size_t i = 0; i < fabrics.size(); ++i) {
    Gpu gpu;
    gpu.index = static_cast<int>(i);
    gpu.fabric = fabrics[i];
    topology.gpus.push_back(gpu);
  }
  return topology;
}

std::vector<Finding> fabric_findings(const NodeTopology& topology) {
  std::vector<Finding> out;
  check_fabric(topology, out);
  return out;
}

std::vector<Finding> with_verdict(const std::vector<Finding>& findings, Verdict verdict) {
  std::vector<Finding> out;
  std::copy_if(findings.begin(), findings.end(), std::back_inserter(out),
               [&](const Finding& f) { return f.verdict == verdict; });
  return out;
}

}  // namespace

TEST(CheckFabric, AHealthyTrayPassesEveryGpuAndItsDomain) {
  const auto findings = fabric_findings(tray({registered(), registered(), registered(), registered()}));
  EXPECT_TRUE(with_verdict(findings, Verdict::fail).empty());
  EXPECT_TRUE(with_verdict(findings, Verdict::warn).empty());
  ASSERT_EQ(findings.size(), 9u);  // registration and health per GPU, and the domain
  EXPECT_EQ(findings.back().check, "nvlink_domain");
  EXPECT_EQ(
      findings.back().message,
      "4 GPUs in one multi-node NVLink domain, cluster 5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56 clique 32766");
}

TEST(CheckFabric, ANodeWithoutAFabricGetsNoFabricVerdicts) {
  EXPECT_TRUE(fabric_findings(tray({std::nullopt, std::nullopt})).empty());
  EXPECT_TRUE(fabric_findings(NodeTopology{}).empty());
}

TEST(CheckFabric, ARegistrationNotCompletedFailsNamingTheGpuAndState) {
  GpuFabric registering = registered("00000000-0000-0000-0000-000000000000", 0);
  registering.state = FabricState::in_progress;
  GpuFabric not_started = registering;
  not_started.state = FabricState::not_started;
  const auto fails =
      with_verdict(fabric_findings(tray({registered(), registering, not_started})), Verdict::fail);
  ASSERT_EQ(fails.size(), 2u);
  EXPECT_EQ(fails[0].check, "nvlink_fabric");
  EXPECT_EQ(fails[0].subject, "GPU1");
  EXPECT_EQ(fails[0].message.rfind("fabric registration in_progress, not completed", 0), 0u)
      << fails[0].message;
  EXPECT_EQ(fails[1].subject, "GPU2");
  EXPECT_EQ(fails[1].message.rfind("fabric registration not_started", 0), 0u) << fails[1].message;
}

TEST(CheckFabric, ACompletedRegistrationWithAFailedProbeFails) {
  GpuFabric failed = registered("00000000-0000-0000-0000-000000000000", 0);
  failed.status = "Insufficient Resources";
  const auto fails = with_verdict(fabric_findings(tray({failed})), Verdict::fail);
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_EQ(fails[0].subject, "GPU0");
  EXPECT_NE(fails[0].message.find("status 'Insufficient Resources', not Success"), std::string::npos);
}

TEST(CheckFabric, EachDegradedHealthFieldWarnsNamingTheGpuAndTheField) {
  GpuFabric degraded = registered();
  degraded.health_mask = 0x1a9;  // bandwidth degraded
  GpuFabric two = registered();
  two.health_mask = 0x266;  // route recovery, access timeout recovery, wrong system GUID
  const auto warns = with_verdict(fabric_findings(tray({registered(), degraded, two})), Verdict::warn);
  ASSERT_EQ(warns.size(), 4u);
  EXPECT_EQ(warns[0].check, "fabric_health");
  EXPECT_EQ(warns[0].subject, "GPU1");
  EXPECT_EQ(warns[0].message, "degraded_bandwidth: NVLink bandwidth degraded (health mask 0x1a9)");
  EXPECT_EQ(warns[1].subject, "GPU2");
  EXPECT_EQ(warns[1].message.rfind("route_recovery:", 0), 0u);
  EXPECT_EQ(warns[2].message.rfind("access_timeout_recovery:", 0), 0u);
  EXPECT_EQ(warns[3].message.rfind("incorrect_configuration: incorrect configuration: incorrect_sysguid", 0),
            0u)
      << warns[3].message;
}

TEST(CheckFabric, HealthIsNotJudgedWhereTheDriverReportsNone) {
  GpuFabric unknown = registered();
  unknown.health_mask.reset();
  const auto findings = fabric_findings(tray({unknown}));
  EXPECT_TRUE(std::none_of(findings.begin(), findings.end(),
                           [](const Finding& f) { return f.check == "fabric_health"; }));
}

TEST(CheckFabric, GpusDisagreeingOnTheCliqueFailNamingTheField) {
  const auto fails = with_verdict(
      fabric_findings(tray({registered(), registered(), registered(kRack, 7), registered(kRack, 7)})),
      Verdict::fail);
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_EQ(fails[0].check, "nvlink_domain");
  EXPECT_EQ(fails[0].subject, "node");
  EXPECT_EQ(fails[0].message,
            "GPUs disagree on the fabric's clique_id (GPU2, GPU3 7; GPU0, GPU1 32766): NCCL puts GPUs in one "
            "MNNVL clique only when it matches");
}

TEST(CheckFabric, GpusDisagreeingOnTheClusterFailNamingTheField) {
  const std::string other = "11111111-2222-3333-4444-555555555555";
  const auto fails = with_verdict(fabric_findings(tray({registered(), registered(other)})), Verdict::fail);
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_NE(fails[0].message.find("disagree on the fabric's cluster_uuid (GPU1 " + other + "; GPU0 " + kRack),
            std::string::npos)
      << fails[0].message;
}

TEST(CheckFabric, AnNvswitchNodeIsJudgedOnRegistrationButHasNoMultiNodeDomain) {
  GpuFabric hgx = registered("00000000-0000-0000-0000-000000000000", 0);
  const auto findings = fabric_findings(tray({hgx, hgx}));
  EXPECT_TRUE(with_verdict(findings, Verdict::fail).empty());
  EXPECT_TRUE(std::none_of(findings.begin(), findings.end(),
                           [](const Finding& f) { return f.check == "nvlink_domain"; }));
  EXPECT_EQ(findings[0].message,
            "registered (completed, Success), cluster 00000000-0000-0000-0000-000000000000 clique 0");
}

TEST(CheckFabric, AStatusNoSourceGaveIsNotAFailure) {
  GpuFabric unknown_status = registered();
  unknown_status.status.reset();
  const auto findings = fabric_findings(tray({unknown_status}));
  EXPECT_TRUE(with_verdict(findings, Verdict::fail).empty());
  EXPECT_EQ(findings[0].message.rfind("registered (completed, status unknown)", 0), 0u) << findings[0].message;
  EXPECT_TRUE(unknown_status.in_multi_node_domain()) << "NCCL reads only the state and the UUID";
}
