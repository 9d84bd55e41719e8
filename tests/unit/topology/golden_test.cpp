// Golden files for the renderers. Regenerate with NCCLTUNE_UPDATE_GOLDEN=1 and review the diff.
#include "golden.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.h"
#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/sources/topology_reader.h"
#include "topology/topology_json.h"
#include "topology/topology_table.h"

using namespace nccltune;
using nccltune::test_support::expect_golden;

namespace {

NodeTopology read_fixture(const std::string& from) {
  const std::string path = test_support::fixture(from).string();
  auto source = parse_topology_source(path);
  if (!source) {
    source = parse_topology_source("nvidia-smi:" + path);
  }
  EXPECT_TRUE(source) << source.error();
  auto topology = read_node_topology(*source, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

class Golden : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Golden, TableJsonAndCheck) {
  const std::string fixture = GetParam();
  NodeTopology topology = read_fixture(fixture);
  topology.host = std::filesystem::path(fixture).stem().string();  // stable across renames of meta.yaml hosts
  std::string base = std::filesystem::path(fixture).stem().string();
  expect_golden(base + ".table.txt", render_topology_table(topology));
  expect_golden(base + ".json", topology_to_json(topology).dump(2) + "\n");
  const CheckReport report = check_node(topology, {});
  expect_golden(base + ".check.txt", render_check_text(topology, report));  // `check`
  expect_golden(base + ".check-verbose.txt", render_check_text(topology, report, CheckDetail::every_check));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden,
                         ::testing::Values("nodes/dgx-h100", "nodes/dgx-h100-degraded", "nodes/dgx-a100",
                                           "nodes/gb200-tray", "nodes/roce-2nic-mtu1500",
                                           "nodes/dgx-h100-no-peermem", "nodes/vm-h100-2gpu",
                                           "nodes/gb200-nvl72-tray", "nodes/gb200-nvl72-tray-fabric-degraded",
                                           "nvidia-smi/dgx-a100-8gpu-8nic-tabs.txt",
                                           "nvidia-smi/old-driver-4gpu-pcie-soc.txt"),
                         [](const auto& param_info) {
                           std::string name = std::filesystem::path(param_info.param).stem().string();
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

namespace {

std::vector<std::string> check_text_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool check_line_starts(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

// A Slurm prolog's log gets a healthy node's verdict and exports, not 34 PASS lines.
TEST(CheckText, HealthyNodePrintsTheVerdictAndNoPassLine) {
  const NodeTopology topology = read_fixture("nodes/dgx-h100");
  const CheckReport report = check_node(topology, {});
  ASSERT_EQ(report.exit_code(), 0);
  const auto lines = check_text_lines(render_check_text(topology, report));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "PASS: 34 checks, 0 warnings, 0 failures");
  for (const auto& line : lines) {
    EXPECT_FALSE(check_line_starts(line, "PASS  ")) << line;
    EXPECT_FALSE(check_line_starts(line, "GPUDirect RDMA")) << line;
  }
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], "Recommended:");
  EXPECT_TRUE(check_line_starts(lines[3], "  export NCCL_IB_HCA='=mlx5_0,")) << lines[3];
}

TEST(CheckText, VerboseListsEveryCheck) {
  const NodeTopology topology = read_fixture("nodes/dgx-h100");
  const CheckReport report = check_node(topology, {});
  const std::string text = render_check_text(topology, report, CheckDetail::every_check);
  const auto lines = check_text_lines(text);
  size_t listed = 0;
  for (const auto& line : lines)
    if (check_line_starts(line, "PASS  ") || check_line_starts(line, "WARN  ") ||
        check_line_starts(line, "FAIL  "))
      ++listed;
  EXPECT_EQ(listed, report.findings.size());
  EXPECT_EQ(listed, 34u);
  for (const auto& f : report.findings) EXPECT_NE(text.find(f.message), std::string::npos) << f.message;
  EXPECT_NE(text.find("GPUDirect RDMA: ready"), std::string::npos);
  EXPECT_EQ(lines.back(), "PASS: 34 passed, 0 warnings, 0 failures");
}

// A node with problems: exactly its WARN and FAIL lines, fixes and all, in check order, then the
// verdict, then the exports.
TEST(CheckText, ProblemsOnlyThenTheVerdict) {
  struct Case {
    std::string fixture;
    std::vector<std::string> lines;
  };
  const std::vector<Case> cases = {
      {"nodes/dgx-h100-degraded",
       {"FAIL  pcie_link         GPU2                 PCIe link width x8 below its maximum x16 (Gen5 x8 of "
        "Gen5 "
        "x16): the link trained narrower; reseat or replace",
        "FAIL  nic_port          NIC5 (mlx5_5)        port 1 is DOWN, not ACTIVE (InfiniBand)",
        "WARN  pcie_acs          bridge 0000:5c:00.0  ACS P2P redirect is enabled above GPU3: it sends "
        "GPUDirect "
        "P2P and RDMA traffic up to the root complex (disable ACS redirect on bare metal, e.g. setpci or the "
        "BIOS)",
        "FAIL: 35 checks, 1 warning, 2 failures"}},
      {"nodes/dgx-h100-no-peermem",
       {"WARN  gdr_peer_memory   node                 neither nvidia_peermem nor nv_peer_mem is loaded, and "
        "dma-buf cannot be used (kernel 5.4.0-216-generic is older than 5.12; the NVIDIA driver is the "
        "proprietary kernel module, and dma-buf needs the open one): NCCL cannot register GPU memory with "
        "the "
        "NICs, so GPUDirect RDMA is off whatever NCCL_NET_GDR_LEVEL says and network traffic is staged "
        "through host memory; load nvidia_peermem (modprobe nvidia_peermem, and at boot), or run kernel 5.12 "
        "or later with the open kernel module",
        "WARN: 34 checks, 1 warning, 0 failures"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fixture);
    const NodeTopology topology = read_fixture(c.fixture);
    const CheckReport report = check_node(topology, {});
    const auto lines = check_text_lines(render_check_text(topology, report));
    ASSERT_GE(lines.size(), c.lines.size() + 2);
    for (size_t i = 0; i < c.lines.size(); ++i) EXPECT_EQ(lines[i], c.lines[i]);
    EXPECT_EQ(lines[c.lines.size()], "");
    EXPECT_EQ(lines[c.lines.size() + 1], "Recommended:");
    for (size_t i = c.lines.size() + 2; i < lines.size(); ++i)
      EXPECT_TRUE(check_line_starts(lines[i], "  export NCCL_")) << lines[i];
  }
}
