// The Fabric block of `nvidia-smi -q`: a GPU's NVLink fabric registration, its domain and health.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_files.h"
#include "topology/nvidia_smi_query.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

constexpr const char* kNvl72Cluster = "5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56";

Result<NvidiaSmiQuery> parse_fabric_fixture(const std::string& name) {
  const std::filesystem::path path = fixture("nvidia-smi-q/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return parse_nvidia_smi_query(read_file(path), name);
}

// One GPU whose Fabric block holds the given lines, indented as driver 570 prints them.
std::string gpu_with_fabric(const std::string& fabric_lines) {
  return "==============NVSMI LOG==============\nDriver Version : 570.124.06\nAttached GPUs : 1\n"
         "GPU 00000008:01:00.0\n    Product Name : NVIDIA GB200\n    Fabric\n" +
         fabric_lines + "    Processes : None\n";
}

}  // namespace

TEST(NvidiaSmiQueryFabric, Gb200TrayOnDriver570IsRegisteredInOneCliqueAndHealthy) {
  auto query = parse_fabric_fixture("gb200-nvl72-tray-fabric.txt");
  ASSERT_TRUE(query) << query.error();
  ASSERT_EQ(query->gpus.size(), 4u);
  for (const auto& gpu : query->gpus) {
    ASSERT_TRUE(gpu.fabric) << gpu.pci;
    EXPECT_EQ(gpu.fabric->state, FabricState::completed);
    EXPECT_EQ(gpu.fabric->status, "Success");
    EXPECT_EQ(gpu.fabric->clique_id, 32766u);
    EXPECT_EQ(gpu.fabric->cluster_uuid, kNvl72Cluster);
    // Full bandwidth and three False rows are NVML's FALSE (2) in each 2-bit field; driver 570
    // prints no Incorrect Configuration row, so its field stays "not supported" (0).
    EXPECT_EQ(gpu.fabric->health_mask, 0xaau);
    EXPECT_EQ(gpu.fabric->summary, std::nullopt);
    EXPECT_TRUE(gpu.fabric->in_multi_node_domain());
  }
  EXPECT_EQ(query->gpus[2].pci, "0018:01:00.0");
}

TEST(NvidiaSmiQueryFabric, Gb300TrayOnDriver580ReadsSummaryConfigurationAndFaults) {
  auto query = parse_fabric_fixture("gb300-nvl72-tray-fabric-580.txt");
  ASSERT_TRUE(query) << query.error();
  ASSERT_EQ(query->gpus.size(), 4u);
  const auto& healthy = query->gpus[0].fabric;
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->health_mask, 0x1aau);  // configuration NONE (1) in bits 11:8
  EXPECT_EQ(healthy->summary, FabricSummary::healthy);

  const auto& degraded = query->gpus[1].fabric;
  ASSERT_TRUE(degraded);
  EXPECT_EQ(degraded->health_mask, 0x1a9u);  // Bandwidth Degraded: DEGRADED_BW TRUE (1)
  EXPECT_EQ(degraded->summary, FabricSummary::limited_capacity);
  EXPECT_EQ(decode_fabric_health(*degraded->health_mask).degraded_bandwidth, FabricCondition::present);

  // Registering: the state is known, every other value N/A.
  const auto& registering = query->gpus[2].fabric;
  ASSERT_TRUE(registering);
  EXPECT_EQ(registering->state, FabricState::in_progress);
  EXPECT_EQ(registering->status, std::nullopt);
  EXPECT_EQ(registering->cluster_uuid, std::nullopt);
  EXPECT_EQ(registering->clique_id, std::nullopt);
  EXPECT_EQ(registering->health_mask, std::nullopt);
  EXPECT_FALSE(registering->in_multi_node_domain());

  const auto& unhealthy = query->gpus[3].fabric;
  ASSERT_TRUE(unhealthy);
  const FabricHealth health = decode_fabric_health(unhealthy->health_mask.value_or(0));
  EXPECT_EQ(health.route_unhealthy, FabricCondition::present);
  EXPECT_EQ(health.route_recovery, FabricCondition::absent);
  EXPECT_EQ(incorrect_configuration_name(health.incorrect_configuration), "insufficient_nvlinks");
  EXPECT_EQ(unhealthy->summary, FabricSummary::unhealthy);
}

TEST(NvidiaSmiQueryFabric, HgxH100DriverPrintsOnlyStateAndStatus) {
  auto query = parse_fabric_fixture("dgx-h100-8gpu-full.txt");
  ASSERT_TRUE(query) << query.error();
  ASSERT_EQ(query->gpus.size(), 8u);
  const auto& fabric = query->gpus[0].fabric;
  ASSERT_TRUE(fabric);
  EXPECT_EQ(fabric->state, FabricState::completed);
  EXPECT_EQ(fabric->status, "Success");
  EXPECT_EQ(fabric->cluster_uuid, std::nullopt);
  EXPECT_EQ(fabric->health_mask, std::nullopt);
  EXPECT_FALSE(fabric->in_multi_node_domain()) << "an NVSwitch node is one NVLink domain by itself";
}

TEST(NvidiaSmiQueryFabric, GpusWithoutAFabricHaveNone) {
  // A PCIe GPU on a driver that prints the block: every value N/A.
  auto na = parse_nvidia_smi_query(
      gpu_with_fabric("        State : N/A\n        Status : N/A\n        CliqueId : N/A\n"
                      "        ClusterUUID : N/A\n        Health\n            Bandwidth : N/A\n"),
      "na.txt");
  ASSERT_TRUE(na) << na.error();
  EXPECT_EQ(na->gpus[0].fabric, std::nullopt);
  auto not_supported = parse_nvidia_smi_query(gpu_with_fabric("        State : Not Supported\n"), "ns.txt");
  ASSERT_TRUE(not_supported) << not_supported.error();
  EXPECT_EQ(not_supported->gpus[0].fabric, std::nullopt);
  // Drivers before R550 print no Fabric block.
  auto rtx = parse_fabric_fixture("rtx4090-x8-bar1-256m.txt");
  ASSERT_TRUE(rtx) << rtx.error();
  EXPECT_EQ(rtx->gpus[0].fabric, std::nullopt);
}

TEST(NvidiaSmiQueryFabric, FieldsOutsideTheFabricBlockAreNotTheFabric) {
  // "State" and "Health" elsewhere (a later driver's blocks) say nothing of the fabric.
  auto query = parse_nvidia_smi_query(
      gpu_with_fabric("        State : In Progress\n") +
          "    Other\n        State : Completed\n        Health\n            Bandwidth : Degraded\n",
      "other.txt");
  ASSERT_TRUE(query) << query.error();
  ASSERT_TRUE(query->gpus[0].fabric);
  EXPECT_EQ(query->gpus[0].fabric->state, FabricState::in_progress);
  EXPECT_EQ(query->gpus[0].fabric->health_mask, std::nullopt);
}

TEST(NvidiaSmiQueryFabric, StatusKeepsTheDriversWords) {
  // Registered, but the fabric manager could not give the GPU what it needs.
  auto query = parse_nvidia_smi_query(
      gpu_with_fabric("        State : Completed\n        Status : Insufficient Resources\n"
                      "        CliqueId : 0\n        ClusterUUID : 00000000-0000-0000-0000-000000000000\n"),
      "status.txt");
  ASSERT_TRUE(query) << query.error();
  ASSERT_TRUE(query->gpus[0].fabric);
  EXPECT_EQ(query->gpus[0].fabric->status, "Insufficient Resources");
  EXPECT_FALSE(query->gpus[0].fabric->status_success());
  EXPECT_EQ(query->gpus[0].fabric->clique_id, 0u);
}

TEST(NvidiaSmiQueryFabric, ADamagedCliqueIdOrClusterUuidIsAnErrorNamingTheLine) {
  auto clique = parse_nvidia_smi_query(gpu_with_fabric("        State : Completed\n        CliqueId : 12x\n"),
                                       "clique.txt");
  ASSERT_FALSE(clique);
  EXPECT_EQ(clique.error(), "clique.txt:8: '12x' is not a clique id (a whole number below 2^32)");
  auto big = parse_nvidia_smi_query(gpu_with_fabric("        CliqueId : 4294967296\n"), "big.txt");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("big.txt:7: '4294967296' is not a clique id"), std::string::npos) << big.error();
  auto uuid =
      parse_nvidia_smi_query(gpu_with_fabric("        ClusterUUID : 5b3f1c2e-8a4d-4e6b\n"), "uuid.txt");
  ASSERT_FALSE(uuid);
  EXPECT_EQ(uuid.error(), "uuid.txt:7: '5b3f1c2e-8a4d-4e6b' is not a UUID");
}
