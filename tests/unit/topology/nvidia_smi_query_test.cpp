#include "topology/nvidia_smi_query.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "test_files.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;

namespace {

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

Result<NvidiaSmiQuery> parse_query_fixture(const std::string& name) {
  const std::filesystem::path path = fixture("nvidia-smi-q/" + name);
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "cannot open fixture " << name;
  return parse_nvidia_smi_query(read_file(path), name);
}

// An error is one line that starts with "origin:line: ".
void expect_error(const Result<NvidiaSmiQuery>& result, const std::string& message) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), message);
  EXPECT_EQ(result.error().find('\n'), std::string::npos);
}

// One GPU section around the given lines, as a driver prints it.
std::string one_gpu(const std::string& body) {
  return "\n==============NVSMI LOG==============\n\nDriver Version : 550.54.15\n"
         "Attached GPUs : 1\nGPU 00000000:18:00.0\n" +
         body;
}

}  // namespace

TEST(NvidiaSmiQuery, Rtx4090ServerHasOnlyA256MibBar1) {
  auto query = parse_query_fixture("rtx4090-x8-bar1-256m.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->driver_version, "550.127.05");
  ASSERT_EQ(query->gpus.size(), 8u);
  const char* buses[] = {"01", "25", "41", "61", "81", "a1", "c1", "e1"};
  for (std::size_t i = 0; i < 8; ++i) {
    const NvidiaSmiQueryGpu& gpu = query->gpus[i];
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    EXPECT_EQ(gpu.pci, std::string("0000:") + buses[i] + ":00.0");
    EXPECT_EQ(gpu.name, "NVIDIA GeForce RTX 4090");
    EXPECT_EQ(gpu.memory_bytes, 24564 * MiB);
    EXPECT_EQ(gpu.bar1_bytes, 256 * MiB);
    EXPECT_FALSE(gpu.pcie.known()) << "the excerpt has no PCI block";
  }
}

TEST(NvidiaSmiQuery, H100SxmHasA128GibBar1) {
  auto query = parse_query_fixture("h100-sxm-80gb-x8-bar1-128g.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->driver_version, "565.57.01");
  ASSERT_EQ(query->gpus.size(), 8u);
  EXPECT_EQ(query->gpus[0].pci, "0000:18:00.0");
  EXPECT_EQ(query->gpus[7].pci, "0000:db:00.0");
  for (const auto& gpu : query->gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.memory_bytes, 81559 * MiB);
    EXPECT_EQ(gpu.bar1_bytes, 131072 * MiB);
  }
}

TEST(NvidiaSmiQuery, GraceSuperchipsReportBar1AsUnknown) {
  // An excerpt pasted into an issue: a shell prompt before the banner, ".." where lines were cut,
  // no FB block, and a PCI domain other than 0 (GB10).
  auto query = parse_query_fixture("gh200-gb10-bar1-na.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->driver_version, "580.95.05");
  ASSERT_EQ(query->gpus.size(), 2u);
  EXPECT_EQ(query->gpus[0].pci, "000f:01:00.0");
  EXPECT_EQ(query->gpus[0].name, "NVIDIA GB10");
  EXPECT_EQ(query->gpus[1].pci, "0000:dd:00.0");
  EXPECT_EQ(query->gpus[1].name, "NVIDIA GH200 480GB");
  for (const auto& gpu : query->gpus) {
    EXPECT_FALSE(gpu.bar1_bytes) << gpu.pci;
    EXPECT_FALSE(gpu.memory_bytes) << gpu.pci;
  }
}

TEST(NvidiaSmiQuery, WholeCaptureReadsPcieLinksAndIgnoresOtherBlocks) {
  // Every block a driver prints: "Max" under "Bank Remap Availability Histogram", "Current"
  // under "MIG Mode" and "Total" under "Conf Compute Protected Memory Usage" are not the PCIe
  // link or the memory.
  auto query = parse_query_fixture("dgx-h100-8gpu-full.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->driver_version, "550.54.15");
  ASSERT_EQ(query->gpus.size(), 8u);
  for (const auto& gpu : query->gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.memory_bytes, 81559 * MiB);
    EXPECT_EQ(gpu.bar1_bytes, 131072 * MiB);
    EXPECT_EQ(gpu.pcie.max_gen, 5) << gpu.pci;
    EXPECT_EQ(gpu.pcie.max_width, 16) << gpu.pci;
  }
  EXPECT_EQ(query->gpus[0].pcie, (PcieLink{5, 16, 5, 16}));
  EXPECT_EQ(query->gpus[2].pci, "0000:3a:00.0");
  EXPECT_EQ(query->gpus[2].pcie, (PcieLink{5, 8, 5, 16}));
  EXPECT_TRUE(query->gpus[2].pcie.width_degraded());
  EXPECT_EQ(query->gpus[6].pcie, (PcieLink{4, 16, 5, 16}));
  EXPECT_TRUE(query->gpus[6].pcie.speed_degraded());
}

TEST(NvidiaSmiQuery, WordsForUnknownValuesLeaveFactsNull) {
  for (const std::string unknown : {"N/A", "[N/A]", "[Not Supported]", "Unknown Error",
                                    "Insufficient Permissions", "[GPU requires reset]"}) {
    auto query = parse_nvidia_smi_query(one_gpu("    Product Name : " + unknown +
                                                "\n    PCI\n        GPU Link Info\n"
                                                "            PCIe Generation\n                Max : " +
                                                unknown + "\n                Current : " + unknown +
                                                "\n            Link Width\n                Max : " + unknown +
                                                "\n    FB Memory Usage\n        Total : " + unknown +
                                                "\n    BAR1 Memory Usage\n        Total : " + unknown + "\n"),
                                        "q.txt");
    ASSERT_TRUE(query) << unknown << ": " << query.error();
    ASSERT_EQ(query->gpus.size(), 1u);
    const NvidiaSmiQueryGpu& gpu = query->gpus[0];
    EXPECT_FALSE(gpu.name) << unknown;
    EXPECT_FALSE(gpu.memory_bytes) << unknown;
    EXPECT_FALSE(gpu.bar1_bytes) << unknown;
    EXPECT_FALSE(gpu.pcie.known()) << unknown;
  }
  // A size of 0 is a driver that did not answer, not a GPU without memory.
  auto zero = parse_nvidia_smi_query(one_gpu("    BAR1 Memory Usage\n        Total : 0 MiB\n"), "q.txt");
  ASSERT_TRUE(zero) << zero.error();
  EXPECT_FALSE(zero->gpus[0].bar1_bytes);
}

TEST(NvidiaSmiQuery, CrlfTabsOtherUnitsAndWidthSpellings) {
  const std::string text =
      "==============NVSMI LOG==============\r\n"
      "Driver Version\t: 535.104.05\r\n"
      "GPU 0000:07:00.0\r\n"
      "\tProduct Name\t: NVIDIA A100-SXM4-40GB\r\n"
      "\tPCI\r\n"
      "\t\tGPU Link Info\r\n"
      "\t\t\tPCIe Generation\r\n"
      "\t\t\t\tMax\t: 4\r\n"
      "\t\t\t\tCurrent\t: 4\r\n"
      "\t\t\tLink Width\r\n"
      "\t\t\t\tMax\t: x16\r\n"
      "\t\t\t\tCurrent\t: 16\r\n"
      "\tFB Memory Usage\r\n"
      "\t\tTotal\t: 40 GiB\r\n"
      "\tBAR1 Memory Usage\r\n"
      "\t\tTotal\t: 67108864 KiB\r\n";
  auto query = parse_nvidia_smi_query(text, "crlf.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->driver_version, "535.104.05");
  ASSERT_EQ(query->gpus.size(), 1u);
  EXPECT_EQ(query->gpus[0].pci, "0000:07:00.0");
  EXPECT_EQ(query->gpus[0].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(query->gpus[0].memory_bytes, std::uint64_t{40} << 30);
  EXPECT_EQ(query->gpus[0].bar1_bytes, std::uint64_t{64} << 30);
  EXPECT_EQ(query->gpus[0].pcie, (PcieLink{4, 16, 4, 16}));
}

TEST(NvidiaSmiQuery, CaptureThatLostItsIndentationStillReadsItsBlocks) {
  const std::string text =
      "GPU 00000000:18:00.0\nProduct Name : NVIDIA H100 80GB HBM3\nFB Memory Usage\nTotal : 81559 MiB\n"
      "Used : 0 MiB\nBAR1 Memory Usage\nTotal : 131072 MiB\nGPU Link Info\nPCIe Generation\nMax : 5\n"
      "Current : 5\nLink Width\nMax : 16x\nCurrent : 16x\n";
  auto query = parse_nvidia_smi_query(text, "flat.txt");
  ASSERT_TRUE(query) << query.error();
  ASSERT_EQ(query->gpus.size(), 1u);
  EXPECT_EQ(query->gpus[0].memory_bytes, 81559 * MiB);
  EXPECT_EQ(query->gpus[0].bar1_bytes, 131072 * MiB);
  EXPECT_EQ(query->gpus[0].pcie, (PcieLink{5, 16, 5, 16}));
}

TEST(NvidiaSmiQuery, InvalidUtf8IsRepairedAndControlCharactersBlanked) {
  auto query =
      parse_nvidia_smi_query(one_gpu("    Product Name : NVIDIA \xff\xfe H100\x01PCIe\x7f\n"), "bad.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->gpus[0].name, "NVIDIA ?? H100 PCIe");
}

TEST(NvidiaSmiQuery, ANodeWithoutGpusSaysSo) {
  auto query =
      parse_nvidia_smi_query("\n==============NVSMI LOG==============\n\nAttached GPUs : 0\n", "none.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_TRUE(query->gpus.empty());
}

TEST(NvidiaSmiQuery, DamagedInputIsOneLineNamingTheLine) {
  expect_error(parse_nvidia_smi_query("", "empty.txt"),
               "empty.txt:1: no GPU section (a line 'GPU <PCI bus id>'): not the output of nvidia-smi -q, or "
               "cut short");
  expect_error(
      parse_nvidia_smi_query("\n==============NVSMI LOG==============\n\nAttached GPUs : 8\n", "cut.txt"),
      "cut.txt:2: no GPU section (a line 'GPU <PCI bus id>'): not the output of nvidia-smi -q, or cut "
      "short");
  expect_error(parse_nvidia_smi_query("GPU 0000zz:18:00.0\n", "bus.txt"),
               "bus.txt:1: '0000zz:18:00.0' in a GPU section header is not a PCI address");
  expect_error(
      parse_nvidia_smi_query(one_gpu("    FB Memory Usage\n        Total : 24564 XiB\n"), "unit.txt"),
      "unit.txt:8: '24564 XiB' is not a size in KiB, MiB or GiB");
  expect_error(parse_nvidia_smi_query(one_gpu("    FB Memory Usage\n        Total : 24564\n"), "unit.txt"),
               "unit.txt:8: '24564' is not a size in KiB, MiB or GiB");
  expect_error(parse_nvidia_smi_query(one_gpu("    BAR1 Memory Usage\n        Total : -1 MiB\n"), "neg.txt"),
               "neg.txt:8: '-1 MiB' is not a size in KiB, MiB or GiB");
  expect_error(parse_nvidia_smi_query(
                   one_gpu("    BAR1 Memory Usage\n        Total : 99999999999999999999 MiB\n"), "big.txt"),
               "big.txt:8: '99999999999999999999 MiB' is not a size in KiB, MiB or GiB");
  expect_error(
      parse_nvidia_smi_query(one_gpu("    FB Memory Usage\n        Total : 2000000000 GiB\n"), "big.txt"),
      "big.txt:8: '2000000000 GiB' is more than the 1 PiB a GPU may have");
  expect_error(parse_nvidia_smi_query(
                   one_gpu("    GPU Link Info\n        PCIe Generation\n            Max : 9\n"), "gen.txt"),
               "gen.txt:9: '9' is not a PCIe generation (1 to 7)");
  expect_error(parse_nvidia_smi_query(
                   one_gpu("    GPU Link Info\n        Link Width\n            Current : 16y\n"), "w.txt"),
               "w.txt:9: '16y' is not a PCIe link width (1x to 32x)");
  expect_error(parse_nvidia_smi_query(one_gpu("    Product Name : A\nGPU 00000000:18:00.0\n"), "twice.txt"),
               "twice.txt:8: GPU 0000:18:00.0 appears twice (first on line 6)");
}

TEST(NvidiaSmiQuery, MoreGpusThanANodeMayHaveAreRefused) {
  std::string text;
  for (std::size_t i = 0; i <= kMaxDevicesPerKind; ++i) {
    char line[32];
    std::snprintf(line, sizeof line, "GPU %04zx:%02zx:00.0\n", i / 256, i % 256);
    text += line;
  }
  expect_error(parse_nvidia_smi_query(text, "many.txt"),
               "many.txt:257: more than 256 GPU sections; a node may have at most 256 GPUs");
  text.resize(text.rfind("GPU "));
  auto query = parse_nvidia_smi_query(text, "many.txt");
  ASSERT_TRUE(query) << query.error();
  EXPECT_EQ(query->gpus.size(), kMaxDevicesPerKind);
}
