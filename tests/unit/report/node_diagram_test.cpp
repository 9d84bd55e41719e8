// The node diagram: NUMA nodes, PCIe switches, GPUs and NICs with their links, from replayed
// snapshots of real machine types; names from the topology are escaped.
#include "report/node_diagram.h"

#include <gtest/gtest.h>

#include <string>

#include "report_fixtures.h"

using namespace nccltune;
using nccltune::test_support::occurrences;
using nccltune::test_support::read_node_snapshot;

TEST(NodeDiagram, DgxH100HasTwoNumaNodesEightSwitchesAndAnNvswitchFabric) {
  const std::string svg = render_node_diagram(read_node_snapshot("dgx-h100"));
  EXPECT_EQ(occurrences(svg, "<g class=\"gpu\""), 8u);
  EXPECT_EQ(occurrences(svg, "<g class=\"nic\""), 8u);
  EXPECT_EQ(occurrences(svg, "class=\"numa\""), 2u);
  EXPECT_NE(svg.find(">NUMA 0 \u00b7 CPUs 0-7,16-23<"), std::string::npos);
  EXPECT_NE(svg.find(">NUMA 1 \u00b7 CPUs 8-15,24-31<"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "class=\"pcie-switch\""), 8u);  // one GPU and its NIC under each
  EXPECT_EQ(occurrences(svg, "class=\"gpu-nic\""), 8u);      // each GPU to its own NIC
  EXPECT_NE(svg.find(">\u2192 NIC3 mlx5_3 (PIX)<"), std::string::npos);
  EXPECT_NE(svg.find(">NVSwitch fabric \u00b7 NV18 per GPU<"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "class=\"nvlink\""), 8u);
  EXPECT_NE(svg.find(">SYS<"), std::string::npos);  // the inter-socket link
}

TEST(NodeDiagram, DgxA100GroupsGpuPairsWithTheirNicsUnderOneSwitch) {
  const std::string svg = render_node_diagram(read_node_snapshot("dgx-a100"));
  EXPECT_EQ(occurrences(svg, "<g class=\"gpu\""), 8u);
  EXPECT_EQ(occurrences(svg, "<g class=\"nic\""), 10u);
  // Four GPU-pair switches and the storage NICs' switch.
  EXPECT_EQ(occurrences(svg, "class=\"pcie-switch\""), 5u);
  EXPECT_NE(svg.find("(PXB)<"), std::string::npos);
}

TEST(NodeDiagram, PcieBoxWithoutNvlinkDrawsNoFabric) {
  const std::string svg = render_node_diagram(read_node_snapshot("pcie-4gpu"));
  EXPECT_EQ(occurrences(svg, "<g class=\"gpu\""), 4u);
  EXPECT_EQ(occurrences(svg, "class=\"numa\""), 1u);
  EXPECT_EQ(svg.find("NVSwitch"), std::string::npos);
  EXPECT_EQ(svg.find("class=\"nvlink\""), std::string::npos);
  EXPECT_NE(svg.find(">Ethernet 100 Gb/s<"), std::string::npos);  // the RoCE NIC
}

TEST(NodeDiagram, MarksDegradedLinksAndDownPorts) {
  const std::string svg = render_node_diagram(read_node_snapshot("dgx-h100-degraded"));
  EXPECT_NE(svg.find("fill=\"#b91c1c\" font-size=\"10\">Gen5 x8 (max x16)<"), std::string::npos);  // GPU2
  EXPECT_NE(svg.find(">H100 80GB HBM3 \u00b7 NV18<"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#b91c1c\" font-size=\"10\" font-weight=\"600\">DOWN<"), std::string::npos);
}

TEST(NodeDiagram, DirectNvlinksWithoutNvswitchAreArcs) {
  NodeTopology t;
  t.host = "pair";
  t.nvswitch = false;
  for (int i = 0; i < 2; ++i) {
    Gpu gpu;
    gpu.index = i;
    gpu.numa = 0;
    gpu.nvlinks = 4;
    t.gpus.push_back(gpu);
  }
  t.set_link("GPU0", "GPU1", LinkType{LinkKind::nvlink, 4}, FactSource::nvml);
  const std::string svg = render_node_diagram(t);
  EXPECT_EQ(occurrences(svg, "<path class=\"nvlink\""), 1u);
  EXPECT_NE(svg.find("GPU0 - GPU1: NV4"), std::string::npos);
  EXPECT_EQ(svg.find("NVSwitch"), std::string::npos);
}

TEST(NodeDiagram, EscapesHostileNamesAndCutsLongOnes) {
  NodeTopology t;
  t.host = "<script>alert(1)</script>";
  Gpu gpu;
  gpu.name = "NVIDIA <img src=x onerror=alert(1)>";
  gpu.numa = 0;
  t.gpus.push_back(gpu);
  Nic nic;
  nic.name = std::string("mlx5_\"0\xff\x1b[2J");
  nic.numa = 0;
  t.nics.push_back(nic);
  const std::string svg = render_node_diagram(t);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_EQ(svg.find('\x1b'), std::string::npos);
  EXPECT_EQ(svg.find('\xff'), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("mlx5_&quot;0\\xff\\x1b[2J"), std::string::npos);
  EXPECT_NE(svg.find(">&lt;img src=x onerror=ale\u2026<"),
            std::string::npos);  // the tile cuts at 22 characters
}

TEST(NodeDiagram, SaysSoWhenThereIsNothingToDraw) {
  NodeTopology t;
  t.host = "cpu-only";
  const std::string svg = render_node_diagram(t);
  EXPECT_NE(svg.find("no GPUs or NICs in this topology"), std::string::npos);
  EXPECT_EQ(svg.find("class=\"numa\""), std::string::npos);
}
