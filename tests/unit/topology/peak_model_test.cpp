// The hardware peak of the generated node snapshots, and the cases where a fact is missing.
#include "topology/peak_model.h"

#include <gtest/gtest.h>

#include "test_files.h"
#include "topology/sources/topology_reader.h"

namespace nccltune {
namespace {

using test_support::fixture;

NodeTopology snapshot(const std::string& name) {
  auto source = parse_topology_source(fixture("nodes/" + name).string());
  EXPECT_TRUE(source.ok()) << name;
  auto topology = read_node_topology(*source, {});
  EXPECT_TRUE(topology.ok()) << name;
  return topology.ok() ? *topology : NodeTopology{};
}

TEST(PeakModel, DgxH100) {
  NodePeak peak = node_peak(snapshot("dgx-h100"));
  ASSERT_TRUE(peak.intra_node.gbps);
  EXPECT_DOUBLE_EQ(*peak.intra_node.gbps, 450.0);
  EXPECT_EQ(peak.intra_node.bottleneck, "NVLink4 x18");
  ASSERT_TRUE(peak.inter_node.gbps);
  EXPECT_DOUBLE_EQ(*peak.inter_node.gbps, 50.0);
  EXPECT_EQ(peak.inter_node.bottleneck, "1x mlx5 400 Gb/s per GPU");

  // One node: NVLink. Two nodes: 8 rails of 50 GB/s let 400 GB/s through, below NVLink's 450.
  EXPECT_DOUBLE_EQ(*collective_peak(peak, "all_reduce", 1, 8).gbps, 450.0);
  LineRate two = collective_peak(peak, "all_reduce", 2, 8);
  ASSERT_TRUE(two.gbps);
  EXPECT_DOUBLE_EQ(*two.gbps, 400.0);
  EXPECT_EQ(two.bottleneck, "network, 1x mlx5 400 Gb/s per GPU x 8 GPUs");
  // alltoall on 2 nodes of 8: 8 of each rank's 15 counted shares cross the network.
  EXPECT_DOUBLE_EQ(*collective_peak(peak, "alltoall", 2, 8).gbps, 50.0 * 15 / 8);
}

TEST(PeakModel, OneRankPerNodeIsItsNic) {
  NodePeak peak = node_peak(snapshot("dgx-h100"));
  EXPECT_FALSE(collective_peak(peak, "all_reduce", 1, 1).gbps) << "one rank: busbw is 0";
  EXPECT_DOUBLE_EQ(collective_peak(peak, "all_reduce", 4, 1).gbps.value_or(0), 50.0);
  EXPECT_DOUBLE_EQ(collective_peak(peak, "all_reduce", 2, 4).gbps.value_or(0), 200.0) << "4 of 8 rails";
}

TEST(PeakModel, DgxA100TwoNodesIsTheNetwork) {
  NodePeak peak = node_peak(snapshot("dgx-a100"));
  EXPECT_DOUBLE_EQ(peak.intra_node.gbps.value_or(0), 300.0);
  EXPECT_EQ(peak.intra_node.bottleneck, "NVLink3 x12");
  // The storage NICs (mlx5_8, mlx5_9) serve no GPU: the rails are the eight HDR200 ports.
  EXPECT_DOUBLE_EQ(peak.inter_node.gbps.value_or(0), 25.0);
  EXPECT_DOUBLE_EQ(collective_peak(peak, "all_reduce", 2, 8).gbps.value_or(0), 200.0);
}

TEST(PeakModel, PcieBoxIsTheSlowestGpuLink) {
  NodePeak peak = node_peak(snapshot("pcie-4gpu"));
  ASSERT_TRUE(peak.intra_node.gbps);
  EXPECT_NEAR(*peak.intra_node.gbps, 31.5, 0.01);  // 16 GT/s x 16 lanes x 128/130 / 8
  EXPECT_EQ(peak.intra_node.bottleneck, "PCIe Gen4 x16");
  // One 100 Gb/s NIC for four GPUs.
  EXPECT_DOUBLE_EQ(peak.inter_node.gbps.value_or(0), 12.5 / 4);
  EXPECT_EQ(peak.inter_node.bottleneck, "1/4 of mlx5 100 Gb/s per GPU");
}

TEST(PeakModel, IdleGpusCountAtTheirMaximumSpeedAndNarrowLinksAtTheirWidth) {
  EXPECT_DOUBLE_EQ(node_peak(snapshot("dgx-h100-idle")).intra_node.gbps.value_or(0), 450.0);
  NodeTopology topology = snapshot("pcie-4gpu");
  topology.gpus[2].pcie = {1, 8, 4, 16};  // idle at Gen1, and trained at x8
  NodePeak peak = node_peak(topology);
  EXPECT_NEAR(peak.intra_node.gbps.value_or(0), 31.5 / 2, 0.01);
  EXPECT_EQ(peak.intra_node.bottleneck, "PCIe Gen4 x8");
}

TEST(PeakModel, GraceBlackwellTray) {
  NodePeak peak = node_peak(snapshot("gb200-tray"));
  EXPECT_DOUBLE_EQ(peak.intra_node.gbps.value_or(0), 900.0);
  EXPECT_EQ(peak.intra_node.bottleneck, "NVLink5 x18");
  EXPECT_DOUBLE_EQ(peak.inter_node.gbps.value_or(0), 50.0);
  // 18 trays of one NVL72 rack talk over NVLink; a second rack's trays over the network.
  EXPECT_EQ(peak.nvlink_domain_gpus, 72);
  LineRate rack = collective_peak(peak, "all_reduce", 18, 4);
  EXPECT_DOUBLE_EQ(rack.gbps.value_or(0), 900.0);
  EXPECT_EQ(rack.bottleneck, "NVLink5 x18, one NVLink domain of up to 72 GPUs across nodes");
  EXPECT_DOUBLE_EQ(collective_peak(peak, "all_reduce", 36, 4).gbps.value_or(0), 200.0);
  EXPECT_FALSE(node_peak(snapshot("dgx-h100")).nvlink_domain_gpus);
}

TEST(PeakModel, MissingFactsMakeThePeakUnknown) {
  NodeTopology topology = snapshot("dgx-h100");
  topology.gpus[3].name.reset();
  topology.gpus[3].sm.reset();
  NodePeak peak = node_peak(topology);
  EXPECT_FALSE(peak.intra_node.gbps);
  EXPECT_FALSE(peak.intra_node.bottleneck);
  EXPECT_NE(peak.intra_node.unknown_reason.value_or("").find("GPU3"), std::string::npos);
  EXPECT_FALSE(collective_peak(peak, "all_reduce", 1, 8).gbps);
  EXPECT_FALSE(collective_peak(peak, "all_reduce", 2, 8).gbps);

  topology = snapshot("dgx-h100");
  topology.gpus[0].nvlinks.reset();
  EXPECT_FALSE(node_peak(topology).intra_node.gbps);

  topology = snapshot("dgx-h100");
  topology.nics[5].rate_gbps.reset();
  peak = node_peak(topology);
  EXPECT_TRUE(peak.intra_node.gbps);
  EXPECT_FALSE(peak.inter_node.gbps);
  EXPECT_TRUE(collective_peak(peak, "all_reduce", 1, 8).gbps) << "one node needs no NIC";
  EXPECT_FALSE(collective_peak(peak, "all_reduce", 2, 8).gbps);

  // A rail that is down: NCCL would not use it, and the rate of the rest is not this model's.
  EXPECT_FALSE(node_peak(snapshot("dgx-h100-degraded")).inter_node.gbps);

  topology = snapshot("pcie-4gpu");
  topology.gpus[1].pcie = {};
  EXPECT_FALSE(node_peak(topology).intra_node.gbps);

  EXPECT_FALSE(node_peak(NodeTopology{}).intra_node.gbps);
  EXPECT_FALSE(collective_peak(node_peak(snapshot("dgx-h100")), "sendrecv", 1, 8).gbps);
}

TEST(PeakModel, NvidiaSmiMatrixAloneNamesNoModel) {
  auto topology = read_node_topology(
      {TopologySource::Kind::nvidia_smi, fixture("nvidia-smi/dgx-h100-8gpu-10nic.txt")}, {});
  ASSERT_TRUE(topology.ok());
  EXPECT_FALSE(node_peak(*topology).intra_node.gbps) << "no GPU name, no compute capability";
}

TEST(PeakModel, RateTable) {
  EXPECT_NEAR(*pcie_lane_gbps(3) * 16, 15.75, 0.01);
  EXPECT_NEAR(*pcie_lane_gbps(5) * 16, 63.02, 0.01);
  EXPECT_FALSE(pcie_lane_gbps(0));
  EXPECT_FALSE(pcie_lane_gbps(7));
  EXPECT_DOUBLE_EQ(*nvlink_link_gbps(4), 25.0);
  EXPECT_FALSE(nvlink_link_gbps(6));
  Gpu gpu;
  gpu.name = "NVIDIA H200";
  EXPECT_EQ(nvlink_generation(gpu), 4);
  gpu.name = "NVIDIA RTX A1000";
  EXPECT_FALSE(nvlink_generation(gpu)) << "A100 is not a prefix match";
  gpu.name = "NVIDIA RTX A6000";
  EXPECT_FALSE(nvlink_generation(gpu)) << "bridged workstation NVLink runs other rates";
  gpu.sm = 80;
  EXPECT_EQ(nvlink_generation(gpu), 3);
}

}  // namespace
}  // namespace nccltune
