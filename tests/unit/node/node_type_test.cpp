// The node type key with and without a multi-node NVLink fabric, and the fabric in NodeType's
// one wire format.
#include "node/node_type.h"

#include <gtest/gtest.h>

#include <string>

#include "test_files.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;

namespace {

NodeTopology snapshot_topology(const std::string& node) {
  auto topology = read_node_topology({TopologySource::Kind::snapshot, fixture("nodes/" + node)}, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? std::move(topology.value()) : NodeTopology{};
}

std::string key_of(const std::string& node) {
  return node_type_key(local_node_type(snapshot_topology(node), "2.28.9", "13.0"));
}

}  // namespace

TEST(NodeTypeMnnvl, AnNvl72TrayRegisteredInOneCliqueSaysMnnvl) {
  const NodeType type = local_node_type(snapshot_topology("gb200-nvl72-tray"), "2.28.9", "13.0");
  EXPECT_TRUE(type.mnnvl);
  EXPECT_EQ(node_type_key(type), "gb200.4gpu.mnnvl.4xib400.node.nccl2.28");
}

TEST(NodeTypeMnnvl, KeysOfNodesWithoutAFabricDoNotChange) {
  // The keys profiles and stores already carry.
  EXPECT_EQ(key_of("dgx-h100"), "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28");
  EXPECT_EQ(key_of("gb200-tray"), "gb200.4gpu.nvswitch.4xib400.node.nccl2.28");
  EXPECT_EQ(key_of("pcie-4gpu"), "l40s.4gpu.1xroce100.node.nccl2.28");
}

TEST(NodeTypeMnnvl, ATrayWithAGpuNotRegisteredIsNotMnnvl) {
  // NCCL enables MNNVL only when every rank's fabric is COMPLETED (src/mnnvl.cc).
  EXPECT_EQ(key_of("gb200-nvl72-tray-fabric-degraded"), "gb200.4gpu.nvswitch.4xib400.node.nccl2.28");
}

TEST(NodeTypeMnnvl, GpusInDifferentCliquesAreNotOneMnnvlNode) {
  NodeTopology topology = snapshot_topology("gb200-nvl72-tray");
  topology.gpus[3].fabric->clique_id = 7;
  EXPECT_FALSE(local_node_type(topology, "2.28.9", "13.0").mnnvl);
  topology = snapshot_topology("gb200-nvl72-tray");
  topology.gpus[0].fabric->cluster_uuid = "00000000-0000-0000-0000-000000000000";  // NVSwitch-only
  EXPECT_FALSE(local_node_type(topology, "2.28.9", "13.0").mnnvl);
}

TEST(NodeTypeMnnvl, TheWireFormatCarriesItAndAnOlderOneReadsAsFalse) {
  const NodeType type = local_node_type(snapshot_topology("gb200-nvl72-tray"), "2.28.9", "13.0");
  const std::string wire = node_type_to_json(type).dump();
  EXPECT_NE(wire.find("\"mnnvl\":true"), std::string::npos) << wire;
  auto parsed = parse_node_type(wire, "wire");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(*parsed, type);
  auto older = parse_node_type(R"({"gpu": "NVIDIA GB200", "gpus": 4, "nvswitch": true})", "older");
  ASSERT_TRUE(older) << older.error();
  EXPECT_FALSE(older->mnnvl);
  auto bad = parse_node_type(R"({"mnnvl": "sometimes"})", "bad");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("node_type.mnnvl"), std::string::npos) << bad.error();
}

TEST(NodeTypeGdr, WhetherTheNicsTakeGpuMemoryIsCheckGdrPeerMemory) {
  // nvidia_peermem loaded: NCCL registers GPU memory with the NICs.
  EXPECT_EQ(local_node_type(snapshot_topology("dgx-h100"), "2.28.9", "13.0").gdr, true);
  // Kernel 5.4 without nvidia_peermem: neither it nor dma-buf, so NCCL runs without GDR.
  EXPECT_EQ(local_node_type(snapshot_topology("dgx-h100-no-peermem"), "2.28.9", "13.0").gdr, false);
  // The IOMMU translating DMA blocks GDR's health in check, but NCCL does not see it: GDR stays on.
  EXPECT_EQ(local_node_type(snapshot_topology("dgx-h100-iommu-dma"), "2.28.9", "13.0").gdr, true);
  // The peer-memory modules not read at all: unknown.
  NodeTopology unread = snapshot_topology("dgx-h100");
  unread.gpudirect = GpuDirectFacts{};
  EXPECT_EQ(local_node_type(unread, "2.28.9", "13.0").gdr, std::nullopt);
  // The key is the same whatever GDR is: a node whose module is unloaded keeps its profiles.
  EXPECT_EQ(key_of("dgx-h100-no-peermem"), key_of("dgx-h100"));
}

TEST(NodeTypeGdr, TheWireFormatCarriesItAndAnOlderOneReadsAsUnknown) {
  const NodeType type = local_node_type(snapshot_topology("dgx-h100-no-peermem"), "2.28.9", "13.0");
  const std::string wire = node_type_to_json(type).dump();
  EXPECT_NE(wire.find("\"gdr\":false"), std::string::npos) << wire;
  auto parsed = parse_node_type(wire, "wire");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(*parsed, type);
  auto older = parse_node_type(R"({"gpu": "NVIDIA H100", "gpus": 8, "nics": 8})", "older");
  ASSERT_TRUE(older) << older.error();
  EXPECT_EQ(older->gdr, std::nullopt);
  auto bad = parse_node_type(R"({"gdr": "maybe"})", "bad");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("node_type.gdr"), std::string::npos) << bad.error();
}
