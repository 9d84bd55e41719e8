#include "topology/nvidia_smi_topo.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_files.h"
#include "topology/topology_json.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

std::string read_fixture(const std::string& name) {
  const std::filesystem::path path = fixture("nvidia-smi/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return read_file(path);
}

Result<NodeTopology> parse_fixture(const std::string& name) {
  return parse_nvidia_smi_topo(read_fixture(name), name);
}

// The link type between two devices as text ("PIX", "NV18"), after checking that both argument
// orders find the same link; "none" when there is none.
std::string link(const NodeTopology& topology, const std::string& a, const std::string& b) {
  const DeviceLink* forward = topology.find_link(a, b);
  const DeviceLink* backward = topology.find_link(b, a);
  EXPECT_EQ(forward, backward) << a << " " << b;
  if (!forward) return "none";
  return to_string(forward->type);
}

std::vector<std::string> nic_names(const NodeTopology& topology) {
  std::vector<std::string> names;
  for (const auto& nic : topology.nics) names.push_back(nic.name.value_or("null"));
  return names;
}

// Every pair of devices has exactly one link, stored once with the lower-ordered device as `a`
// (GPUs before NICs, lower index first), read from nvidia-smi; nothing is linked to itself.
void expect_full_symmetric_matrix(const NodeTopology& topology) {
  std::vector<std::string> ids;
  for (const auto& gpu : topology.gpus) ids.push_back(gpu_id(gpu.index));
  for (const auto& nic : topology.nics) ids.push_back(nic_id(nic.index));
  EXPECT_EQ(topology.links.size(), ids.size() * (ids.size() - 1) / 2);
  for (std::size_t x = 0; x < ids.size(); ++x) {
    for (std::size_t y = x + 1; y < ids.size(); ++y) {
      const DeviceLink* found = topology.find_link(ids[y], ids[x]);
      ASSERT_NE(found, nullptr) << ids[x] << " " << ids[y];
      EXPECT_EQ(found->a, ids[x]);
      EXPECT_EQ(found->b, ids[y]);
      EXPECT_NE(found->type.kind, LinkKind::self);
      EXPECT_EQ(found->source, FactSource::nvidia_smi);
    }
  }
  EXPECT_FALSE(topology.nvswitch.has_value());
  ASSERT_EQ(topology.sources_used.size(), 1u);
  EXPECT_EQ(topology.sources_used[0], FactSource::nvidia_smi);
}

// An error is one line that starts with "origin:line: ".
void expect_error(const Result<NodeTopology>& result, const std::string& message) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), message);
  EXPECT_EQ(result.error().find('\n'), std::string::npos);
}

}  // namespace

TEST(NvidiaSmiTopo, DgxH100EightIbNicsPixToOneGpuEach) {
  auto topology = parse_fixture("dgx-h100-8gpu-10nic.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 8u);
  ASSERT_EQ(topology->nics.size(), 10u);
  EXPECT_EQ(nic_names(*topology),
            (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6",
                                      "mlx5_7", "mlx5_eth0", "mlx5_eth1"}));
  expect_full_symmetric_matrix(*topology);
  EXPECT_EQ(link(*topology, "GPU0", "GPU7"), "NV18");
  EXPECT_EQ(link(*topology, "GPU0", "NIC0"), "PIX");
  EXPECT_EQ(link(*topology, "NIC5", "GPU5"), "PIX");
  EXPECT_EQ(link(*topology, "GPU0", "NIC1"), "NODE");
  EXPECT_EQ(link(*topology, "GPU0", "NIC4"), "SYS");
  EXPECT_EQ(link(*topology, "GPU3", "NIC8"), "NODE");
  EXPECT_EQ(link(*topology, "NIC9", "GPU4"), "SYS");
  EXPECT_EQ(link(*topology, "NIC8", "NIC9"), "PIX");
  EXPECT_EQ(link(*topology, "NIC0", "NIC7"), "SYS");
  EXPECT_EQ(topology->find_link("GPU1", "GPU2")->type, (LinkType{LinkKind::nvlink, 18}));

  const Gpu& gpu0 = topology->gpus[0];
  EXPECT_EQ(gpu0.index, 0);
  EXPECT_EQ(gpu0.cpu_affinity, "0-55,112-167");
  EXPECT_EQ(gpu0.numa, 0);
  EXPECT_FALSE(gpu0.name.has_value());
  EXPECT_FALSE(gpu0.pci.has_value());
  EXPECT_EQ(gpu0.sources,
            (Provenance{{"cpu_affinity", FactSource::nvidia_smi}, {"numa", FactSource::nvidia_smi}}));
  EXPECT_EQ(topology->gpus[7].index, 7);
  EXPECT_EQ(topology->gpus[7].cpu_affinity, "56-111,168-223");
  EXPECT_EQ(topology->gpus[7].numa, 1);
  const Nic& nic9 = topology->nics[9];
  EXPECT_EQ(nic9.index, 9);
  EXPECT_FALSE(nic9.numa.has_value());
  EXPECT_EQ(nic9.sources, (Provenance{{"name", FactSource::nvidia_smi}}));
}

TEST(NvidiaSmiTopo, DgxA100TabsPaddedSelfCellsAndEmptyNicCells) {
  auto topology = parse_fixture("dgx-a100-8gpu-8nic-tabs.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 8u);
  ASSERT_EQ(topology->nics.size(), 8u);
  EXPECT_EQ(nic_names(*topology), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4",
                                                            "mlx5_5", "mlx5_6", "mlx5_7"}));
  expect_full_symmetric_matrix(*topology);
  EXPECT_EQ(link(*topology, "GPU4", "GPU5"), "NV12");
  EXPECT_EQ(link(*topology, "GPU0", "NIC0"), "PXB");
  EXPECT_EQ(link(*topology, "NIC1", "GPU1"), "PXB");
  EXPECT_EQ(link(*topology, "GPU0", "NIC2"), "NODE");
  EXPECT_EQ(link(*topology, "GPU0", "NIC4"), "SYS");
  EXPECT_EQ(link(*topology, "NIC6", "NIC7"), "PXB");
  EXPECT_EQ(link(*topology, "NIC7", "NIC0"), "SYS");
  EXPECT_EQ(topology->gpus[3].cpu_affinity, "0-63,128-191");
  EXPECT_EQ(topology->gpus[3].numa, 0);
  EXPECT_EQ(topology->gpus[4].cpu_affinity, "64-127,192-255");
  EXPECT_EQ(topology->gpus[4].numa, 1);
  for (const auto& nic : topology->nics) EXPECT_FALSE(nic.numa.has_value());
}

TEST(NvidiaSmiTopo, OldDriverSocReadsAsSysWithoutNumaColumnOrLegend) {
  auto topology = parse_fixture("old-driver-4gpu-pcie-soc.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 4u);
  EXPECT_EQ(topology->nics.size(), 0u);
  expect_full_symmetric_matrix(*topology);
  EXPECT_EQ(link(*topology, "GPU0", "GPU1"), "PIX");
  EXPECT_EQ(link(*topology, "GPU3", "GPU2"), "PHB");
  EXPECT_EQ(link(*topology, "GPU0", "GPU2"), "SYS");
  EXPECT_EQ(link(*topology, "GPU3", "GPU1"), "SYS");
  EXPECT_EQ(topology->gpus[0].cpu_affinity, "0-9,20-29");
  EXPECT_EQ(topology->gpus[2].cpu_affinity, "10-19,30-39");
  for (const auto& gpu : topology->gpus) {
    EXPECT_FALSE(gpu.numa.has_value());
    EXPECT_EQ(gpu.sources, (Provenance{{"cpu_affinity", FactSource::nvidia_smi}}));
  }
}

TEST(NvidiaSmiTopo, VmEverythingPhbWithCrlfLineEndings) {
  auto topology = parse_fixture("vm-4gpu-2nic-phb-crlf.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 4u);
  ASSERT_EQ(topology->nics.size(), 2u);
  EXPECT_EQ(nic_names(*topology), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  expect_full_symmetric_matrix(*topology);
  for (const auto& each : topology->links) EXPECT_EQ(to_string(each.type), "PHB");
  EXPECT_EQ(link(*topology, "NIC1", "GPU3"), "PHB");
  EXPECT_EQ(link(*topology, "NIC0", "NIC1"), "PHB");
  for (const auto& gpu : topology->gpus) {
    EXPECT_EQ(gpu.cpu_affinity, "0-47");
    EXPECT_FALSE(gpu.numa.has_value());  // "N/A"
    EXPECT_EQ(gpu.sources.count("numa"), 0u);
  }
}

TEST(NvidiaSmiTopo, GraceBlackwellTrayAllSysWithAnsiHeader) {
  auto topology = parse_fixture("gb200-tray-4gpu-6nic-ansi.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 4u);
  ASSERT_EQ(topology->nics.size(), 6u);
  EXPECT_EQ(nic_names(*topology),
            (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5"}));
  expect_full_symmetric_matrix(*topology);
  for (const auto& gpu : topology->gpus) {
    for (const auto& nic : topology->nics) {
      EXPECT_EQ(link(*topology, nic_id(nic.index), gpu_id(gpu.index)), "SYS");
    }
  }
  EXPECT_EQ(link(*topology, "GPU0", "GPU3"), "NV18");
  EXPECT_EQ(link(*topology, "NIC5", "NIC4"), "PIX");
  EXPECT_EQ(link(*topology, "NIC0", "NIC1"), "SYS");
  EXPECT_EQ(topology->gpus[1].cpu_affinity, "0-71");
  EXPECT_EQ(topology->gpus[1].numa, 0);  // "0,2-17"
  EXPECT_EQ(topology->gpus[2].cpu_affinity, "72-143");
  EXPECT_EQ(topology->gpus[2].numa, 1);  // "1,18-33"
}

TEST(NvidiaSmiTopo, WorkstationNv4WithoutLegendLeavesNicNameNull) {
  auto topology = parse_fixture("workstation-2gpu-nv4-1nic-nolegend.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 2u);
  ASSERT_EQ(topology->nics.size(), 1u);
  EXPECT_FALSE(topology->nics[0].name.has_value());
  EXPECT_TRUE(topology->nics[0].sources.empty());
  expect_full_symmetric_matrix(*topology);
  EXPECT_EQ(topology->find_link("GPU1", "GPU0")->type, (LinkType{LinkKind::nvlink, 4}));
  EXPECT_EQ(link(*topology, "GPU0", "NIC0"), "PHB");
  EXPECT_EQ(link(*topology, "NIC0", "GPU1"), "PHB");
  EXPECT_EQ(topology->gpus[1].cpu_affinity, "0-31");
  EXPECT_EQ(topology->gpus[1].numa, 0);
}

TEST(NvidiaSmiTopo, HgxValuesSplitBySingleSpaceAndAnsiRemnants) {
  auto topology = parse_fixture("hgx-h100-8gpu-4nic-space-split.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 8u);
  ASSERT_EQ(topology->nics.size(), 4u);
  EXPECT_EQ(nic_names(*topology), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  expect_full_symmetric_matrix(*topology);
  EXPECT_EQ(link(*topology, "GPU0", "NIC0"), "PXB");
  EXPECT_EQ(link(*topology, "NIC1", "GPU2"), "PXB");
  EXPECT_EQ(link(*topology, "GPU0", "NIC1"), "NODE");
  EXPECT_EQ(link(*topology, "GPU0", "NIC2"), "SYS");
  EXPECT_EQ(link(*topology, "NIC3", "NIC2"), "NODE");
  EXPECT_EQ(link(*topology, "GPU7", "GPU6"), "NV18");
  EXPECT_EQ(topology->gpus[0].cpu_affinity, "0-51,104-155");
  EXPECT_EQ(topology->gpus[0].numa, 0);  // "0 N/A": NUMA 0, GPU NUMA ID N/A
  EXPECT_EQ(topology->gpus[5].cpu_affinity, "52-103,156-207");
  EXPECT_EQ(topology->gpus[5].numa, 1);
}

TEST(NvidiaSmiTopo, SocCellsReadAsSys) {
  auto topology = parse_nvidia_smi_topo(
      "\tGPU0\tGPU1\tCPU Affinity\n"
      "GPU0\t X \tSOC\t0-7\n"
      "GPU1\tSOC\t X \t8-15\n",
      "topo.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  EXPECT_EQ(topology->find_link("GPU0", "GPU1")->type, (LinkType{LinkKind::sys, 0}));
}

TEST(NvidiaSmiTopo, OrdersDevicesAndLinksWhateverTheHeaderOrder) {
  auto topology = parse_nvidia_smi_topo(
      "        NIC0    GPU1    GPU0    CPU Affinity    NUMA Affinity\n"
      "NIC0     X      PIX     SYS\n"
      "GPU1    PIX      X      NV2     0-7             0\n"
      "GPU0    SYS     NV2      X      8-15            1\n",
      "topo.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  ASSERT_EQ(topology->gpus.size(), 2u);
  EXPECT_EQ(topology->gpus[0].index, 0);
  EXPECT_EQ(topology->gpus[0].cpu_affinity, "8-15");
  EXPECT_EQ(topology->gpus[0].numa, 1);
  EXPECT_EQ(topology->gpus[1].index, 1);
  EXPECT_EQ(topology->gpus[1].cpu_affinity, "0-7");
  expect_full_symmetric_matrix(*topology);
  EXPECT_EQ(topology->links[0].a, "GPU0");
  EXPECT_EQ(topology->links[0].b, "GPU1");
  EXPECT_EQ(topology->find_link("NIC0", "GPU1")->a, "GPU1");
  EXPECT_EQ(link(*topology, "GPU1", "NIC0"), "PIX");
  EXPECT_EQ(link(*topology, "NIC0", "GPU0"), "SYS");
}

TEST(NvidiaSmiTopo, SkipsLinesBeforeTheHeader) {
  auto topology = parse_nvidia_smi_topo(
      "$ nvidia-smi topo -m\n"
      "\n"
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NV8     0-15            N/A\n"
      "GPU1    NV8      X      0-15            N/A\n",
      "topo.txt");
  ASSERT_TRUE(topology.ok()) << topology.error();
  EXPECT_EQ(link(*topology, "GPU1", "GPU0"), "NV8");
}

TEST(NvidiaSmiTopo, ErrorWithoutHeaderRow) {
  expect_error(parse_nvidia_smi_topo("", "topo.txt"), "topo.txt:1: no header row of GPUn/NICn labels");
  expect_error(parse_nvidia_smi_topo("# source: nowhere\nLegend:\n\n  X    = Self\n", "topo.txt"),
               "topo.txt:1: no header row of GPUn/NICn labels");
  expect_error(parse_nvidia_smi_topo("# source: nowhere\n"
                                     "GPU0     X      NV2     0-23\n"
                                     "GPU1    NV2      X      0-23\n",
                                     "topo.txt"),
               "topo.txt:2: no header row of GPUn/NICn labels before row GPU0");
}

TEST(NvidiaSmiTopo, ErrorOnUnknownCellText) {
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X      NV2\n"
                                     "GPU1    NVL      X\n",
                                     "topo.txt"),
               "topo.txt:3: row GPU1, column GPU0: unknown link type 'NVL'");
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X      pix\n"
                                     "GPU1    PIX      X\n",
                                     "topo.txt"),
               "topo.txt:2: row GPU0, column GPU1: unknown link type 'pix'");
}

TEST(NvidiaSmiTopo, ErrorOnRowWithTooFewOrTooManyCells) {
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1    GPU2    CPU Affinity\n"
                                     "GPU0     X      NV2     PIX     0-7\n"
                                     "GPU1    NV2      X      PIX     0-7\n"
                                     "GPU2    PIX     PIX     0-7\n",
                                     "topo.txt"),
               "topo.txt:4: row GPU2 has 2 link cells, the header has 3 devices");
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X      NV2     NV2\n"
                                     "GPU1    NV2      X\n",
                                     "topo.txt"),
               "topo.txt:2: row GPU0 has 3 link cells, the header has 2 devices");
  expect_error(parse_nvidia_smi_topo("        NIC0    GPU0\n"
                                     "NIC0     X      PIX\n"
                                     "GPU0    PIX      X      0-7\n",
                                     "topo.txt"),
               "topo.txt:3: row GPU0 has more values after its link cells (1) than the header "
               "has columns (0)");
}

TEST(NvidiaSmiTopo, ErrorOnNonSymmetricMatrix) {
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1    NIC0\n"
                                     "GPU0     X      NV2     PIX\n"
                                     "GPU1    NV2      X      PHB\n"
                                     "NIC0    PXB     PHB      X\n",
                                     "topo.txt"),
               "topo.txt:4: the matrix is not symmetric: GPU0->NIC0 is PIX (line 2) but "
               "NIC0->GPU0 is PXB (line 4)");
}

TEST(NvidiaSmiTopo, ErrorOnDuplicateDeviceLabels) {
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU0\n"
                                     "GPU0     X      NV2\n",
                                     "topo.txt"),
               "topo.txt:1: header names GPU0 twice");
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X      NV2\n"
                                     "GPU0     X      NV2\n"
                                     "GPU1    NV2      X\n",
                                     "topo.txt"),
               "topo.txt:3: row GPU0 appears twice (first on line 2)");
}

TEST(NvidiaSmiTopo, ErrorOnRowsThatDoNotMatchTheHeader) {
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X      NV2\n"
                                     "GPU2    NV2      X\n",
                                     "topo.txt"),
               "topo.txt:3: row GPU2 is not in the header");
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X      NV2\n"
                                     "\n"
                                     "Legend:\n",
                                     "topo.txt"),
               "topo.txt:2: the matrix has no row for GPU1");
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0    NV2     NV2\n"
                                     "GPU1    NV2      X\n",
                                     "topo.txt"),
               "topo.txt:2: row GPU0, column GPU0: expected X, found 'NV2'");
  expect_error(parse_nvidia_smi_topo("        GPU0    GPU1\n"
                                     "GPU0     X       X\n"
                                     "GPU1    NV2      X\n",
                                     "topo.txt"),
               "topo.txt:2: row GPU0, column GPU1: X off the diagonal");
}

TEST(NvidiaSmiTopo, ErrorOnNumaAffinityThatIsNotANodeList) {
  expect_error(parse_nvidia_smi_topo("        GPU0    CPU Affinity    NUMA Affinity\n"
                                     "GPU0     X      0-7             node0\n",
                                     "smi/topo.txt"),
               "smi/topo.txt:2: row GPU0: NUMA Affinity 'node0' is not a list of NUMA nodes");
}

namespace {

// An `nvidia-smi topo -m` text of `gpus` GPUs, NV18 between every pair.
std::string all_nvlink_matrix(int gpus) {
  std::string text;
  for (int i = 0; i < gpus; ++i) text += "\tGPU" + std::to_string(i);
  text += "\tCPU Affinity\tNUMA Affinity\n";
  for (int i = 0; i < gpus; ++i) {
    text += "GPU" + std::to_string(i);
    for (int j = 0; j < gpus; ++j) text += i == j ? "\t X " : "\tNV18";
    text += "\t0-47\t0\n";
  }
  return text;
}

}  // namespace

TEST(NvidiaSmiTopo, InvalidUtf8IsReadAsQuestionMarksAndWritesAsJson) {
  // A damaged capture: \xff in the CPU affinity column (it made the JSON writer abort).
  std::string text = all_nvlink_matrix(2);
  text.replace(text.find("0-47"), 4, "0-47\xff");
  const Result<NodeTopology> topology = parse_nvidia_smi_topo(text, "damaged.txt");
  ASSERT_TRUE(topology) << topology.error();
  EXPECT_EQ(topology->gpus[0].cpu_affinity, "0-47?");
  EXPECT_NO_THROW((void)topology_to_json(*topology).dump());
}

TEST(NvidiaSmiTopo, TwoHundredGpusReadWithEveryPairAndMoreThanTheCapAreRefused) {
  const Result<NodeTopology> big = parse_nvidia_smi_topo(all_nvlink_matrix(200), "200.txt");
  ASSERT_TRUE(big) << big.error();
  EXPECT_EQ(big->gpus.size(), 200u);
  EXPECT_EQ(big->links.size(), 200u * 199 / 2);
  EXPECT_EQ(link(*big, "GPU199", "GPU0"), "NV18");

  const Result<NodeTopology> too_big = parse_nvidia_smi_topo(all_nvlink_matrix(400), "400.txt");
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error(),
            "400.txt:1: header names 400 GPUs and 0 NICs; a node may have at most 256 of each");
  const Result<NodeTopology> huge = parse_nvidia_smi_topo(all_nvlink_matrix(600), "600.txt");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error(),
            "600.txt:1: header names more than 512 devices; a node may have at most 256 GPUs and 256 NICs");
}

TEST(NvidiaSmiTopo, ErrorOnDeviceNumbersWithGaps) {
  // Found by fuzz_nvidia_smi_topo: devices are indexed by their number, so a gap read past the end.
  const Result<NodeTopology> gap = parse_nvidia_smi_topo(
      "\tGPU0\tGPU5\tNIC3\nGPU0\t X \tNV4\tSYS\nGPU5\tNV4\t X \tSYS\nNIC3\tSYS\tSYS\t X \n", "gap.txt");
  ASSERT_FALSE(gap);
  EXPECT_EQ(gap.error(),
            "gap.txt:1: header names GPU5 but only 2 GPUs: numbers must run from 0 without gaps");
}
