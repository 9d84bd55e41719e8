// The NVLink fabric through every source: NVML (the library, live), a snapshot's nvml.yaml and
// nvidia-smi-q.txt, and what `topo` prints of it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "test_files.h"
#include "topology/nvml_facts.h"
#include "topology/sources/nvml_source.h"
#include "topology/sources/snapshot.h"
#include "topology/sources/topology_reader.h"
#include "topology/topology_json.h"
#include "topology/topology_table.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace fs = std::filesystem;

namespace {

constexpr const char* kTrayCluster = "5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56";

NodeTopology replay_node(const std::string& name) {
  auto topology = read_node_topology({TopologySource::Kind::snapshot, fixture("nodes/" + name)}, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

// FAKE_NVML_FABRIC for one scope.
class FakeNvmlMode {
 public:
  explicit FakeNvmlMode(const char* mode) { setenv("FAKE_NVML_FABRIC", mode, 1); }
  ~FakeNvmlMode() { unsetenv("FAKE_NVML_FABRIC"); }
};

}  // namespace

TEST(FabricSnapshot, Nvl72TrayReadsEachGpusFabricFromNvml) {
  const NodeTopology t = replay_node("gb200-nvl72-tray");
  ASSERT_EQ(t.gpus.size(), 4u);
  for (const auto& gpu : t.gpus) {
    ASSERT_TRUE(gpu.fabric) << gpu_id(gpu.index);
    EXPECT_EQ(gpu.fabric->state, FabricState::completed);
    EXPECT_EQ(gpu.fabric->cluster_uuid, kTrayCluster);
    EXPECT_EQ(gpu.fabric->clique_id, 32766u);
    EXPECT_EQ(gpu.fabric->health_mask, 0xaau);
    EXPECT_EQ(gpu.sources.at("fabric"), FactSource::nvml);
  }
  // The tray without the rack: its snapshot predates the fabric, which stays unknown.
  for (const auto& gpu : replay_node("gb200-tray").gpus) EXPECT_EQ(gpu.fabric, std::nullopt);
}

TEST(FabricSnapshot, TopoJsonGivesEachGpuItsDomainStateAndDecodedHealth) {
  const auto doc = topology_to_json(replay_node("gb200-nvl72-tray-fabric-degraded"));
  const auto& healthy = doc["gpus"][0]["fabric"];
  EXPECT_EQ(healthy["cluster_uuid"], kTrayCluster);
  EXPECT_EQ(healthy["clique_id"], 32766);
  EXPECT_EQ(healthy["state"], "completed");
  EXPECT_EQ(healthy["status"], "Success");
  EXPECT_EQ(healthy["health_mask"], "0xaa");
  EXPECT_EQ(healthy["health"]["degraded_bandwidth"], false);
  EXPECT_EQ(healthy["health"]["route_unhealthy"], false);
  EXPECT_TRUE(healthy["health"]["incorrect_configuration"].is_null()) << "not reported by driver 570";
  EXPECT_EQ(healthy["mnnvl"], true);
  EXPECT_EQ(doc["gpus"][1]["fabric"]["state"], "in_progress");
  EXPECT_EQ(doc["gpus"][1]["fabric"]["mnnvl"], false);
  EXPECT_EQ(doc["gpus"][2]["fabric"]["health"]["degraded_bandwidth"], true);
  // The fields every GPU had before are still there, unchanged.
  EXPECT_EQ(doc["gpus"][0]["pci"], "0008:01:00.0");
  EXPECT_EQ(doc["gpus"][0]["nvlinks"], 18);
  // No fabric: null.
  EXPECT_TRUE(topology_to_json(replay_node("dgx-h100"))["gpus"][0]["fabric"].is_null());
}

TEST(FabricSnapshot, TopoTableListsEachGpusFabric) {
  const std::string table = render_topology_table(replay_node("gb200-nvl72-tray-fabric-degraded"));
  EXPECT_NE(table.find("NVLink fabric (cluster UUID, clique, registration, health):"), std::string::npos);
  EXPECT_NE(
      table.find("GPU0    cluster 5b3f1c2e-8a4d-4e6b-9f0a-7c2d1e3b4a56  clique 32766  completed, Success  "
                 "health 0xaa ok  MNNVL\n"),
      std::string::npos)
      << table;
  EXPECT_NE(
      table.find("GPU1    cluster 00000000-0000-0000-0000-000000000000  clique 0  in_progress, Success"),
      std::string::npos);
  EXPECT_NE(table.find("health 0xa9 NVLink bandwidth degraded  MNNVL"), std::string::npos);
  EXPECT_EQ(render_topology_table(replay_node("dgx-h100")).find("NVLink fabric"), std::string::npos);
}

TEST(FabricSnapshot, NvmlYamlRoundTripsTheFabric) {
  auto facts = read_nvml_yaml(fixture("nodes/gb200-nvl72-tray-fabric-degraded/nvml.yaml"));
  ASSERT_TRUE(facts) << facts.error();
  facts->gpus[0].fabric->summary = FabricSummary::healthy;  // R580's summary as well
  const TempDir dir("nccltune-fabric-yaml");
  write_file(dir / "nvml.yaml", nvml_yaml(*facts));
  auto again = read_nvml_yaml(dir / "nvml.yaml");
  ASSERT_TRUE(again) << again.error();
  ASSERT_EQ(again->gpus.size(), facts->gpus.size());
  for (std::size_t i = 0; i < facts->gpus.size(); ++i)
    EXPECT_EQ(again->gpus[i].fabric, facts->gpus[i].fabric);
  EXPECT_EQ(again->gpus[1].fabric->state, FabricState::in_progress);
}

TEST(FabricSnapshot, ABadFabricInNvmlYamlNamesTheFileAndField) {
  const TempDir dir("nccltune-fabric-bad");
  const auto error_for = [&](const std::string& fabric) {
    write_file(dir / "nvml.yaml",
               "gpus:\n  - index: 0\n    pci: \"00000008:01:00.0\"\n    fabric: " + fabric + "\n");
    auto facts = read_nvml_yaml(dir / "nvml.yaml");
    EXPECT_FALSE(facts);
    return facts ? std::string() : facts.error();
  };
  EXPECT_NE(error_for("{state: done}").find("gpus[0].fabric.state: 'done' is not not_supported"),
            std::string::npos);
  EXPECT_NE(error_for("{status: \"Success\"}").find("gpus[0].fabric.state: missing"), std::string::npos);
  EXPECT_NE(error_for("{state: completed, cluster_uuid: \"abc\"}")
                .find("gpus[0].fabric.cluster_uuid: 'abc' is not a UUID"),
            std::string::npos);
  EXPECT_NE(error_for("{state: completed, health_mask: \"0xzz\"}").find("gpus[0].fabric.health_mask"),
            std::string::npos);
  EXPECT_NE(error_for("{state: completed, clique_id: -1}").find("gpus[0].fabric.clique_id"),
            std::string::npos);
  EXPECT_NE(error_for("{state: completed, colour: red}").find("colour"), std::string::npos);
  EXPECT_NE(error_for("{state: done}").find((dir / "nvml.yaml").string()), std::string::npos)
      << "names the file";
}

TEST(FabricSnapshot, NvidiaSmiQueryAloneGivesTheFabric) {
  auto t = read_node_topology(
      {TopologySource::Kind::nvidia_smi_query, fixture("nvidia-smi-q/gb200-nvl72-tray-fabric.txt")}, {});
  ASSERT_TRUE(t) << t.error();
  ASSERT_EQ(t->gpus.size(), 4u);
  ASSERT_TRUE(t->gpus[3].fabric);
  EXPECT_EQ(t->gpus[3].fabric->cluster_uuid, kTrayCluster);
  EXPECT_EQ(t->gpus[3].sources.at("fabric"), FactSource::nvidia_smi);
}

TEST(FabricSnapshot, LiveNvmlReadsTheFabricWithTheV3Struct) {
  auto facts = read_nvml_live(NCCLTUNE_FAKE_NVML_FABRIC);
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_EQ(facts->gpus.size(), 4u);
  const auto& fabric = facts->gpus[0].fabric;
  ASSERT_TRUE(fabric);
  EXPECT_EQ(fabric->state, FabricState::completed);
  EXPECT_EQ(fabric->status, "Success");
  EXPECT_EQ(fabric->cluster_uuid, kTrayCluster);
  EXPECT_EQ(fabric->clique_id, 32766u);
  EXPECT_EQ(fabric->health_mask, 0x1aau);
  EXPECT_EQ(fabric->summary, FabricSummary::healthy);
  ASSERT_TRUE(facts->gpus[3].fabric);
  EXPECT_EQ(facts->gpus[3].fabric->state, FabricState::in_progress);
}

TEST(FabricSnapshot, ADriverThatKnowsOnlyTheV2StructIsAskedAgainWithIt) {
  const FakeNvmlMode v2("v2");
  auto facts = read_nvml_live(NCCLTUNE_FAKE_NVML_FABRIC);
  ASSERT_TRUE(facts) << facts.error();
  const auto& fabric = facts->gpus[0].fabric;
  ASSERT_TRUE(fabric);
  EXPECT_EQ(fabric->state, FabricState::completed);
  EXPECT_EQ(fabric->health_mask, 0x1aau);
  EXPECT_EQ(fabric->summary, std::nullopt) << "v2 has no health summary";
}

TEST(FabricSnapshot, ADriverWithoutTheFabricCallReportsNotSupported) {
  auto facts = read_nvml_live(NCCLTUNE_FAKE_NVML_WITHOUT_FABRIC);
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_EQ(facts->gpus.size(), 4u);
  for (const auto& gpu : facts->gpus) {
    ASSERT_TRUE(gpu.fabric);
    EXPECT_EQ(gpu.fabric->state, FabricState::not_supported);
  }
  // ... which the topology shows as no fabric.
  TopologyInputs in;
  in.nvml = *facts;
  for (const auto& gpu : merge_topology(in).gpus) EXPECT_EQ(gpu.fabric, std::nullopt);
}

TEST(FabricSnapshot, CaptureKeepsTheFabricAndFromReproducesIt) {
  const TempDir dir("nccltune-fabric-capture");
  ReadOptions options;
  options.nvml_library = NCCLTUNE_FAKE_NVML_FABRIC;
  options.nvidia_smi = (dir / "no-nvidia-smi").string();
  const fs::path snapshot = dir / "capture";
  auto captured = capture_snapshot(snapshot, options, "test");
  ASSERT_TRUE(captured) << captured.error();
  auto live = read_nvml_live(NCCLTUNE_FAKE_NVML_FABRIC);
  auto kept = read_nvml_yaml(snapshot / "nvml.yaml");
  ASSERT_TRUE(live && kept) << (kept ? live.error() : kept.error());
  ASSERT_EQ(kept->gpus.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(kept->gpus[i].fabric, live->gpus[i].fabric) << "GPU" << i;
  // --from: this machine's hwloc sees none of the fake's GPUs, so the replay is merged as a
  // snapshot of NVML alone is.
  fs::remove(snapshot / "hwloc.xml");
  auto replayed = read_node_topology({TopologySource::Kind::snapshot, snapshot}, {});
  ASSERT_TRUE(replayed) << replayed.error();
  ASSERT_EQ(replayed->gpus.size(), 4u);
  EXPECT_EQ(replayed->gpus[0].fabric, live->gpus[0].fabric);
  EXPECT_EQ(replayed->gpus[3].fabric->state, FabricState::in_progress);
}
