// `nvidia-smi -q` as a topology source: `--from nvidia-smi-q:FILE` alone, a snapshot's
// nvidia-smi-q.txt filling what the other sources left unknown, and `topo --capture` writing it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "test_files.h"
#include "topology/checks.h"
#include "topology/nvml_facts.h"
#include "topology/sources/snapshot.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// A copy of tests/fixtures/nodes/<node> (its sysfs symlinks kept) that a test may change.
fs::path copy_node(const TempDir& dir, const std::string& node) {
  const fs::path copy = dir / node;
  fs::copy(fixture("nodes/" + node), copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return copy;
}

NodeTopology read_ok(const TopologySource& source) {
  auto topology = read_node_topology(source, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

}  // namespace

TEST(NvidiaSmiQuerySource, FromNamesTheFileKind) {
  auto source = parse_topology_source("nvidia-smi-q:/tmp/node.txt");
  ASSERT_TRUE(source) << source.error();
  EXPECT_EQ(source->kind, TopologySource::Kind::nvidia_smi_query);
  EXPECT_EQ(source->path, "/tmp/node.txt");
  source = parse_topology_source("nvidia-smi:/tmp/node.txt");
  ASSERT_TRUE(source);
  EXPECT_EQ(source->kind, TopologySource::Kind::nvidia_smi);
  EXPECT_FALSE(parse_topology_source("nvidia-smi-q:"));
  auto missing = read_node_topology({TopologySource::Kind::nvidia_smi_query, "/nonexistent.txt"}, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "/nonexistent.txt: no such file");
}

TEST(NvidiaSmiQuerySource, AloneItGivesGpusWithMemoryAndLinksButNoNicsOrLinksBetweenThem) {
  const NodeTopology t =
      read_ok({TopologySource::Kind::nvidia_smi_query, fixture("nvidia-smi-q/dgx-h100-8gpu-full.txt")});
  EXPECT_EQ(t.host, "dgx-h100-8gpu-full");
  EXPECT_EQ(t.sources_used, std::vector<FactSource>{FactSource::nvidia_smi});
  EXPECT_EQ(t.driver_version, "550.54.15");
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_TRUE(t.nics.empty());
  EXPECT_TRUE(t.links.empty());
  EXPECT_FALSE(t.nvswitch);
  for (const Gpu& gpu : t.gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.memory_bytes, 81559 * kMiB);
    EXPECT_EQ(gpu.bar1_bytes, 131072 * kMiB);
    for (const char* field : {"name", "pci", "memory_bytes", "bar1_bytes", "pcie"})
      EXPECT_EQ(gpu.sources.at(field), FactSource::nvidia_smi) << gpu_id(gpu.index) << " " << field;
  }
  EXPECT_EQ(t.gpus[2].pci, "0000:3a:00.0");
  EXPECT_EQ(t.gpus[2].pcie, (PcieLink{5, 8, 5, 16}));
  // The narrow link is a failure, as it is when sysfs reports it.
  const CheckReport report = check_node(t, {});
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(), [](const Finding& f) {
    return f.verdict == Verdict::fail && f.subject.find("GPU2") != std::string::npos;
  }));
}

TEST(NvidiaSmiQuerySource, GraceBar1StaysUnknown) {
  const NodeTopology t =
      read_ok({TopologySource::Kind::nvidia_smi_query, fixture("nvidia-smi-q/gh200-gb10-bar1-na.txt")});
  ASSERT_EQ(t.gpus.size(), 2u);
  for (const Gpu& gpu : t.gpus) {
    EXPECT_FALSE(gpu.bar1_bytes);
    EXPECT_EQ(gpu.sources.count("bar1_bytes"), 0u);
  }
}

TEST(NvidiaSmiQuerySource, InASnapshotItFillsOnlyWhatNvmlAndSysfsLeftUnknown) {
  const TempDir dir("nccltune-smi-q");
  const fs::path node = copy_node(dir, "dgx-h100");
  write_file(node / "nvidia-smi-q.txt", read_file(fixture("nvidia-smi-q/dgx-h100-8gpu-full.txt")));
  // NVML knows GPU0's memory (a driver that reserves more than nvidia-smi printed, say) and no BAR1.
  auto nvml = read_nvml_yaml(node / "nvml.yaml");
  ASSERT_TRUE(nvml) << nvml.error();
  nvml->gpus[0].memory_bytes = 80 * 1024 * kMiB;
  write_file(node / "nvml.yaml", nvml_yaml(*nvml));

  const NodeTopology t = read_ok({TopologySource::Kind::snapshot, node});
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_TRUE(t.notes.empty()) << t.notes.front();
  EXPECT_EQ(t.gpus[0].memory_bytes, 80 * 1024 * kMiB);
  EXPECT_EQ(t.gpus[0].sources.at("memory_bytes"), FactSource::nvml);
  for (const Gpu& gpu : t.gpus) {
    EXPECT_EQ(gpu.sources.at("name"), FactSource::nvml);
    EXPECT_EQ(gpu.bar1_bytes, 131072 * kMiB);
    EXPECT_EQ(gpu.sources.at("bar1_bytes"), FactSource::nvidia_smi);
    EXPECT_EQ(gpu.sources.at("pcie"), FactSource::sysfs);
  }
  EXPECT_EQ(t.gpus[1].memory_bytes, 81559 * kMiB);
  EXPECT_EQ(t.gpus[1].sources.at("memory_bytes"), FactSource::nvidia_smi);
  // sysfs reads the link registers: GPU2 at x16 there, whatever nvidia-smi printed.
  EXPECT_EQ(t.gpus[2].pcie, (PcieLink{5, 16, 5, 16}));
  EXPECT_EQ(t.driver_version, "550.54.15");  // NVML's

  // Without sysfs, nvidia-smi's PCIe link state is the one there is.
  fs::remove_all(node / "sysfs");
  const NodeTopology without_sysfs = read_ok({TopologySource::Kind::snapshot, node});
  EXPECT_EQ(without_sysfs.gpus[2].pcie, (PcieLink{5, 8, 5, 16}));
  EXPECT_EQ(without_sysfs.gpus[2].sources.at("pcie"), FactSource::nvidia_smi);
}

TEST(NvidiaSmiQuerySource, NvidiaSmiTextAloneMakesASnapshot) {
  // `topo -m` and `-q` pasted from a node without hwloc or NVML: the matrix gives the links, `-q`
  // the PCI addresses (GPU i of one is GPU i of the other), names and memory.
  const TempDir dir("nccltune-smi-q");
  const fs::path node = dir / "pasted";
  write_file(node / "nvidia-smi-topo.txt", read_file(fixture("nodes/dgx-h100/nvidia-smi-topo.txt")));
  write_file(node / "nvidia-smi-q.txt", read_file(fixture("nvidia-smi-q/h100-sxm-80gb-x8-bar1-128g.txt")));
  const NodeTopology t = read_ok({TopologySource::Kind::snapshot, node});
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_EQ(t.gpus[2].pci, "0000:3a:00.0");
  EXPECT_EQ(t.gpus[7].pci, "0000:db:00.0");
  EXPECT_EQ(t.gpus[7].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.gpus[7].bar1_bytes, 131072 * kMiB);
  ASSERT_NE(t.find_link("GPU0", "NIC0"), nullptr);
  EXPECT_EQ(to_string(t.find_link("GPU0", "NIC0")->type), "PIX");
  EXPECT_EQ(t.driver_version, "565.57.01");
}

TEST(NvidiaSmiQuerySource, GpusTheOtherSourcesDoNotListAreLeftOutWithANote) {
  const TempDir dir("nccltune-smi-q");
  const fs::path node = copy_node(dir, "dgx-h100");
  write_file(node / "nvidia-smi-q.txt", read_file(fixture("nvidia-smi-q/rtx4090-x8-bar1-256m.txt")));
  const NodeTopology t = read_ok({TopologySource::Kind::snapshot, node});
  ASSERT_EQ(t.gpus.size(), 8u);
  for (const Gpu& gpu : t.gpus) EXPECT_FALSE(gpu.memory_bytes);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_NE(t.notes[0].find("nvidia-smi -q: GPUs the other sources do not list (0000:01:00.0, 0000:25:00.0"),
            std::string::npos)
      << t.notes[0];
}

TEST(NvidiaSmiQuerySource, ADamagedFileInASnapshotIsAnErrorNamingIt) {
  const TempDir dir("nccltune-smi-q");
  const fs::path node = copy_node(dir, "dgx-h100");
  write_file(node / "nvidia-smi-q.txt",
             "GPU 00000000:18:00.0\n    FB Memory Usage\n        Total : lots\n"
             "GPU 00000000:18:00.0\n");
  auto topology = read_node_topology({TopologySource::Kind::snapshot, node}, {});
  ASSERT_FALSE(topology);
  EXPECT_EQ(topology.error(),
            (node / "nvidia-smi-q.txt").string() + ":4: GPU 0000:18:00.0 appears twice (first on line 1)");
}

TEST(NvidiaSmiQuerySource, CaptureKeepsWhatNvidiaSmiQueryPrinted) {
  const TempDir dir("nccltune-smi-q");
  const fs::path fake = dir / "nvidia-smi";
  const std::string printed = fixture("nvidia-smi-q/h100-sxm-80gb-x8-bar1-128g.txt").string();
  write_file(fake, "#!/bin/sh\n[ \"$1\" = -q ] || exit 9\nexec cat '" + printed + "'\n");
  ASSERT_EQ(chmod(fake.c_str(), 0755), 0);
  ReadOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  options.nvidia_smi = fake.string();
  const fs::path snapshot = dir / "capture";
  auto captured = capture_snapshot(snapshot, options, "test");
  ASSERT_TRUE(captured) << captured.error();
  EXPECT_EQ(read_file(snapshot / "nvidia-smi-q.txt"), read_file(printed));
  EXPECT_FALSE(fs::exists(snapshot / "nvidia-smi-topo.txt"));  // `topo -m` failed: left out
  auto replayed = read_node_topology({TopologySource::Kind::snapshot, snapshot}, {});
  ASSERT_TRUE(replayed) << replayed.error();
}
