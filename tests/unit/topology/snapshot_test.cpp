// Replays the node snapshots in tests/fixtures/nodes through the same code path as a live read.
#include "topology/sources/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "test_files.h"
#include "topology/affinity.h"
#include "topology/checks.h"
#include "topology/nvml_facts.h"
#include "topology/sources/gpudirect_source.h"
#include "topology/sources/sysfs_source.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

NodeTopology replay(const std::string& name) {
  auto source = parse_topology_source(fixture("nodes/" + name).string());
  EXPECT_TRUE(source) << source.error();
  auto topology = read_node_topology(*source, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

std::string link_type(const NodeTopology& t, const std::string& a, const std::string& b) {
  const DeviceLink* l = t.find_link(a, b);
  return l ? to_string(l->type) : "none";
}

bool has_finding(const CheckReport& r, Verdict v, const std::string& subject, const std::string& text) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) {
    return f.verdict == v && f.subject.find(subject) != std::string::npos &&
           f.message.find(text) != std::string::npos;
  });
}

}  // namespace

TEST(Snapshot, DgxH100ReadsEveryDeviceWithItsSource) {
  auto t = replay("dgx-h100");
  ASSERT_EQ(t.gpus.size(), 8u);
  ASSERT_EQ(t.nics.size(), 8u);
  EXPECT_EQ(t.nvswitch, true);
  EXPECT_EQ(t.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.gpus[0].pci, "0000:18:00.0");
  EXPECT_EQ(t.gpus[0].sources.at("name"), FactSource::nvml);
  EXPECT_EQ(t.gpus[0].sources.at("pci"), FactSource::hwloc);
  EXPECT_EQ(t.gpus[0].sources.at("pcie"), FactSource::sysfs);
  EXPECT_EQ(t.gpus[0].pcie, (PcieLink{5, 16, 5, 16}));
  EXPECT_EQ(t.gpus[4].numa, 1);
  EXPECT_EQ(t.nics[0].name, "mlx5_0");
  EXPECT_EQ(t.nics[0].state, "ACTIVE");
  EXPECT_EQ(t.nics[0].rate_gbps, 400);
  EXPECT_EQ(t.nics[0].link_layer, "InfiniBand");
  EXPECT_EQ(t.nics[0].sources.at("state"), FactSource::sysfs);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(link_type(t, gpu_id(i), nic_id(i)), "PIX") << i;
  EXPECT_EQ(link_type(t, "GPU0", "NIC1"), "NODE");
  EXPECT_EQ(link_type(t, "GPU0", "NIC4"), "SYS");
  EXPECT_EQ(link_type(t, "GPU0", "GPU7"), "NV18");
  EXPECT_EQ(t.find_link("GPU0", "GPU7")->source, FactSource::nvml);
}

TEST(Snapshot, HwlocTreeAgreesWithTheCapturedNvidiaSmiMatrix) {
  // The snapshot carries both; every GPU-NIC and NIC-NIC pair from the PCI tree must match.
  auto t = replay("dgx-h100");
  auto text = fixture("nodes/dgx-h100/nvidia-smi-topo.txt");
  auto smi = read_node_topology({TopologySource::Kind::nvidia_smi, text}, {});
  ASSERT_TRUE(smi) << smi.error();
  ASSERT_EQ(smi->gpus.size(), t.gpus.size());
  ASSERT_EQ(smi->nics.size(), t.nics.size());
  for (const auto& l : smi->links) EXPECT_EQ(link_type(t, l.a, l.b), to_string(l.type)) << l.a << "-" << l.b;
}

TEST(Snapshot, HealthyDgxH100PassesAndRecommendsAllEightNics) {
  auto report = check_node(replay("dgx-h100"), {});
  EXPECT_EQ(report.exit_code(), 0);
  ASSERT_FALSE(report.recommendations.empty());
  EXPECT_EQ(report.recommendations[0].value, "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7");
}

TEST(Snapshot, DegradedDgxH100FailsNamingTheNarrowLinkAndTheDownPort) {
  auto t = replay("dgx-h100-degraded");
  EXPECT_EQ(t.gpus[2].pcie.width, 8);
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 2);
  EXPECT_TRUE(has_finding(report, Verdict::fail, "GPU2", "x8"));
  EXPECT_TRUE(has_finding(report, Verdict::fail, "mlx5_5", "DOWN"));
  EXPECT_TRUE(has_finding(report, Verdict::warn, "bridge", "ACS"));
}

TEST(Snapshot, IdleLinkSpeedOnlyWarns) {
  auto report = check_node(replay("dgx-h100-idle"), {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_TRUE(has_finding(report, Verdict::warn, "GPU0", "Gen1"));
}

TEST(Snapshot, DgxA100PairsShareTwoNicsAtPxb) {
  auto t = replay("dgx-a100");
  ASSERT_EQ(t.gpus.size(), 8u);
  ASSERT_EQ(t.nics.size(), 10u);
  EXPECT_EQ(t.nvswitch, true);
  EXPECT_EQ(link_type(t, "GPU0", "NIC0"), "PXB");
  EXPECT_EQ(link_type(t, "GPU0", "NIC1"), "PXB");
  EXPECT_EQ(link_type(t, "GPU0", "GPU1"), "NV12");
  EXPECT_EQ(link_type(t, "NIC8", "NIC9"), "PIX");
  auto nearest = nearest_nic_map(assign_nearest_nics(t));
  EXPECT_EQ(nearest["GPU0"], "NIC0");
  EXPECT_EQ(nearest["GPU1"], "NIC1");
  EXPECT_EQ(nearest["GPU7"], "NIC7");
  EXPECT_EQ(check_node(t, {}).exit_code(), 0);
}

TEST(Snapshot, PcieBoxWarnsForGpusBehindTheOtherSwitch) {
  auto t = replay("pcie-4gpu");
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.nvswitch, false);
  EXPECT_EQ(link_type(t, "GPU0", "GPU1"), "PIX");
  EXPECT_EQ(link_type(t, "GPU0", "NIC0"), "PIX");
  EXPECT_EQ(link_type(t, "GPU2", "NIC0"), "NODE");
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_TRUE(has_finding(report, Verdict::warn, "GPU2", "GPUDirect RDMA"));
}

TEST(Snapshot, PcieBoxRecommendsItsRoceV2Ipv4GidIndex) {
  auto t = replay("pcie-4gpu");
  ASSERT_EQ(t.nics.size(), 1u);
  const Nic& nic = t.nics[0];
  EXPECT_EQ(nic.link_layer, "Ethernet");
  ASSERT_TRUE(nic.gids);
  ASSERT_EQ(nic.gids->size(), 4u);
  EXPECT_EQ((*nic.gids)[3], (RoceGid{3, "0000:0000:0000:0000:0000:ffff:0a00:0005", "RoCE v2", "ens1f0np0"}));
  EXPECT_EQ((*nic.gids)[0].gid.substr(0, 5), "fe80:");
  EXPECT_EQ(nic.mtu, 9000);
  auto report = check_node(t, {});
  EXPECT_TRUE(has_finding(report, Verdict::pass, "mlx5_0", "RoCE v2 GID 3: ::ffff:10.0.0.5 on ens1f0np0"));
  EXPECT_TRUE(has_finding(report, Verdict::pass, "mlx5_0", "MTU 9000"));
  auto gid_index = std::find_if(report.recommendations.begin(), report.recommendations.end(),
                                [](const Recommendation& r) { return r.name == "NCCL_IB_GID_INDEX"; });
  ASSERT_NE(gid_index, report.recommendations.end());
  EXPECT_EQ(gid_index->value, "3");
  EXPECT_TRUE(t.notes.empty()) << t.notes.front();
}

TEST(Snapshot, TwoRoceNicsThatDisagreeOnTheGidIndexAtMtu1500) {
  auto t = replay("roce-2nic-mtu1500");
  ASSERT_EQ(t.nics.size(), 2u);
  EXPECT_EQ(t.nics[1].mtu, 1500);
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_TRUE(has_finding(report, Verdict::warn, "node", "(mlx5_0: 3, mlx5_1: 5)"));
  EXPECT_TRUE(has_finding(report, Verdict::warn, "NIC0 (mlx5_0)",
                          "MTU 1500 on ens1f0np0 is below 4096 and caps RoCE's path MTU at 1024"));
  EXPECT_TRUE(has_finding(report, Verdict::warn, "NIC1 (mlx5_1)", "`ip link set dev ens2f0np0 mtu 9000`"));
  EXPECT_TRUE(has_finding(report, Verdict::pass, "GPU2", "NIC1 (mlx5_1) at PIX"));
  for (const auto& r : report.recommendations) EXPECT_NE(r.name, "NCCL_IB_GID_INDEX");
}

TEST(Snapshot, DgxH100HasNvidiaPeermemAndIommuPassthrough) {
  auto t = replay("dgx-h100");
  EXPECT_EQ(t.gpudirect.peer_memory, "nvidia_peermem");
  EXPECT_EQ(t.gpudirect.kernel_release, "5.15.0-105-generic");
  EXPECT_EQ(t.gpudirect.open_kernel_module, false);
  EXPECT_EQ(t.gpus[3].iommu, "identity");
  EXPECT_EQ(t.nics[7].iommu, "identity");
  auto report = check_node(t, {});
  ASSERT_TRUE(report.gdr);
  EXPECT_TRUE(report.gdr->ready);
  EXPECT_TRUE(has_finding(report, Verdict::pass, "node", "nvidia_peermem loaded"));
  // The degraded machine is the same one, with ACS redirect above GPU3.
  auto degraded = check_node(replay("dgx-h100-degraded"), {});
  ASSERT_TRUE(degraded.gdr);
  EXPECT_EQ(degraded.gdr->blocked_by, std::vector<std::string>{"pcie_acs"});
}

TEST(Snapshot, NoPeermemOnKernel54BlocksGpuDirectRdma) {
  auto t = replay("dgx-h100-no-peermem");
  EXPECT_EQ(t.gpudirect.peer_memory, "");
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_TRUE(has_finding(report, Verdict::warn, "node", "kernel 5.4.0-216-generic is older than 5.12"));
  EXPECT_TRUE(has_finding(report, Verdict::warn, "node", "proprietary kernel module"));
  ASSERT_TRUE(report.gdr);
  EXPECT_EQ(report.gdr->blocked_by, std::vector<std::string>{"gdr_peer_memory"});
}

TEST(Snapshot, IommuInDmaModeBlocksGpuDirectRdma) {
  auto report = check_node(replay("dgx-h100-iommu-dma"), {});
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_TRUE(has_finding(report, Verdict::warn, "node", "GPU0, GPU1"));
  EXPECT_TRUE(has_finding(report, Verdict::warn, "node", "(group type DMA-FQ)"));
  ASSERT_TRUE(report.gdr);
  EXPECT_EQ(report.gdr->blocked_by, std::vector<std::string>{"gdr_iommu"});
}

TEST(Snapshot, GraceTrayRegistersGpuMemoryThroughDmaBuf) {
  auto report = check_node(replay("gb200-tray"), {});
  EXPECT_TRUE(has_finding(report, Verdict::pass, "node",
                          "dma-buf (kernel 6.8.0-1013-nvidia-64k, open kernel module"));
  ASSERT_TRUE(report.gdr);
  EXPECT_TRUE(report.gdr->ready);
  // Snapshots taken before these facts were captured leave them unknown, and unjudged.
  auto a100 = replay("dgx-a100");
  EXPECT_FALSE(a100.gpudirect.peer_memory);
  EXPECT_FALSE(a100.gpus[0].iommu);
  EXPECT_FALSE(check_node(a100, {}).gdr);
}

TEST(Snapshot, FlatVmTreeLetsNumaAndLoadDecide) {
  auto t = replay("vm-phb");
  ASSERT_EQ(t.gpus.size(), 4u);
  auto nearest = nearest_nic_map(assign_nearest_nics(t));
  EXPECT_EQ(nearest.size(), 4u);
  std::set<std::string> distinct;
  for (const auto& [gpu, nic] : nearest) distinct.insert(nic);
  EXPECT_EQ(distinct.size(), 4u) << "each GPU gets its own NIC";
}

TEST(Snapshot, TwoGpuH100VmIsTheDemosNodeAndPasses) {
  // The ./run.sh demo's node (2 ranks per node): 2 H100 SXM GPUs, each with its NIC under one
  // emulated switch, NVLinks to NVSwitches the guest does not see on PCI.
  auto t = replay("vm-h100-2gpu");
  ASSERT_EQ(t.gpus.size(), 2u);
  ASSERT_EQ(t.nics.size(), 2u);
  EXPECT_EQ(t.nvswitch, true);
  EXPECT_EQ(t.gpus[1].pci, "0000:07:00.0");
  EXPECT_EQ(t.nics[1].name, "mlx5_1");
  for (int i = 0; i < 2; ++i) EXPECT_EQ(link_type(t, gpu_id(i), nic_id(i)), "PIX") << i;
  EXPECT_EQ(link_type(t, "GPU0", "NIC1"), "PHB");
  EXPECT_EQ(link_type(t, "GPU0", "GPU1"), "NV18");
  // The matrix nvidia-smi printed in the guest agrees with the PCI tree.
  auto smi = read_node_topology(
      {TopologySource::Kind::nvidia_smi, fixture("nodes/vm-h100-2gpu/nvidia-smi-topo.txt")}, {});
  ASSERT_TRUE(smi) << smi.error();
  ASSERT_EQ(smi->gpus.size(), 2u);
  for (const auto& l : smi->links) EXPECT_EQ(link_type(t, l.a, l.b), to_string(l.type)) << l.a << "-" << l.b;
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 0);
  ASSERT_TRUE(report.gdr);
  EXPECT_TRUE(report.gdr->ready);
}

TEST(Snapshot, GraceTrayPicksTheNicOnEachGpusNumaNode) {
  auto t = replay("gb200-tray");
  ASSERT_EQ(t.gpus.size(), 4u);
  ASSERT_EQ(t.nics.size(), 4u);
  for (const auto& a : assign_nearest_nics(t)) {
    ASSERT_TRUE(a.nic);
    EXPECT_EQ(t.nics[static_cast<size_t>(*a.nic)].numa, t.gpus[static_cast<size_t>(a.gpu)].numa)
        << gpu_id(a.gpu);
  }
}

TEST(Snapshot, GraceTrayGpusReachTheirNicsThroughC2c) {
  auto t = replay("gb200-tray");
  ASSERT_EQ(t.gpus.size(), 4u);
  for (const auto& gpu : t.gpus) {
    EXPECT_EQ(gpu.c2c, std::optional<bool>(true)) << gpu_id(gpu.index);
    EXPECT_EQ(gpu.sources.at("c2c"), FactSource::nvml);
  }
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_TRUE(has_finding(report, Verdict::pass, "GPU2", "NIC2 (mlx5_2) through NVLink-C2C"));
  // Snapshots without the fact leave it unknown rather than false.
  for (const auto& gpu : replay("dgx-h100").gpus) EXPECT_FALSE(gpu.c2c) << gpu_id(gpu.index);
}

TEST(Snapshot, NvmlYamlKeepsC2cLinksThroughARoundTrip) {
  NvmlFacts facts;
  NvmlGpu with, without, none;
  with.pci = "0008:01:00.0";
  with.c2c_links = 5;
  with.c2c_bw_mbps = 44712;
  without.index = 1;
  without.pci = "0009:01:00.0";
  none.index = 2;
  none.pci = "0018:01:00.0";
  none.c2c_links = 0;
  facts.gpus = {with, without, none};
  const TempDir dir("nccltune-nvml");
  const std::filesystem::path file = dir / "nvml.yaml";
  write_file(file, nvml_yaml(facts));
  auto back = read_nvml_yaml(file);
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->gpus.size(), 3u);
  EXPECT_EQ(back->gpus[0].c2c_links, 5);
  EXPECT_EQ(back->gpus[0].c2c_bw_mbps, 44712);
  EXPECT_FALSE(back->gpus[1].c2c_links);
  EXPECT_FALSE(back->gpus[1].c2c_bw_mbps);
  EXPECT_EQ(back->gpus[2].c2c_links, 0);
  EXPECT_FALSE(back->gpus[2].c2c_bw_mbps);
}

TEST(Snapshot, NvmlYamlKeepsMemoryAndBar1AndReadsFilesWithoutThem) {
  NvmlFacts facts;
  NvmlGpu known, unknown;
  known.pci = "0000:18:00.0";
  known.memory_bytes = std::uint64_t{81559} << 20;
  known.bar1_bytes = std::uint64_t{128} << 30;
  unknown.index = 1;
  unknown.pci = "0009:01:00.0";
  unknown.memory_bytes = std::uint64_t{96} << 30;  // a Grace superchip: BAR1 N/A
  facts.gpus = {known, unknown};
  const TempDir dir("nccltune-nvml");
  const std::filesystem::path file = dir / "nvml.yaml";
  write_file(file, nvml_yaml(facts));
  auto back = read_nvml_yaml(file);
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->gpus.size(), 2u);
  EXPECT_EQ(back->gpus[0].memory_bytes, std::uint64_t{85520809984});
  EXPECT_EQ(back->gpus[0].bar1_bytes, std::uint64_t{137438953472});
  EXPECT_EQ(back->gpus[1].memory_bytes, std::uint64_t{96} << 30);
  EXPECT_FALSE(back->gpus[1].bar1_bytes);

  // Snapshots written before memory was read have neither key: unknown, not an error.
  const NodeTopology old = replay("dgx-h100");
  for (const auto& gpu : old.gpus) {
    EXPECT_FALSE(gpu.memory_bytes) << gpu_id(gpu.index);
    EXPECT_FALSE(gpu.bar1_bytes) << gpu_id(gpu.index);
  }
  write_file(file, "gpus:\n  - {index: 0, pci: \"0000:18:00.0\", bar1_bytes: 0}\n");
  back = read_nvml_yaml(file);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().find("bar1_bytes"), std::string::npos) << back.error();
}

TEST(Snapshot, NvmlMemoryReachesTheTopologyWithItsSource) {
  const TempDir dir("nccltune-nvml");
  const std::filesystem::path node = dir / "node";
  std::filesystem::copy(
      fixture("nodes/gb200-tray"), node,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  auto nvml = read_nvml_yaml(node / "nvml.yaml");
  ASSERT_TRUE(nvml) << nvml.error();
  for (auto& gpu : nvml->gpus) gpu.memory_bytes = std::uint64_t{189471} << 20;  // BAR1: NOT_SUPPORTED
  write_file(node / "nvml.yaml", nvml_yaml(*nvml));
  auto source = parse_topology_source(node.string());
  ASSERT_TRUE(source) << source.error();
  auto t = read_node_topology(*source, {});
  ASSERT_TRUE(t) << t.error();
  ASSERT_FALSE(t->gpus.empty());
  for (const auto& gpu : t->gpus) {
    EXPECT_EQ(gpu.memory_bytes, std::uint64_t{189471} << 20);
    EXPECT_EQ(gpu.sources.at("memory_bytes"), FactSource::nvml);
    EXPECT_FALSE(gpu.bar1_bytes);
    EXPECT_EQ(gpu.sources.count("bar1_bytes"), 0u);
  }
}

TEST(Snapshot, NvmlYamlRejectsAMisspelledC2cKey) {
  const TempDir dir("nccltune-nvml");
  const std::filesystem::path file = dir / "nvml.yaml";
  write_file(file, "gpus:\n  - {index: 0, pci: \"0008:01:00.0\", c2c: {link: 5}}\n");
  auto back = read_nvml_yaml(file);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().find("c2c: unknown key 'link'"), std::string::npos) << back.error();
}

TEST(Snapshot, NotASnapshotIsAClearError) {
  auto source = parse_topology_source(fixture("nodes").string());  // the snapshots' folder, not one
  ASSERT_TRUE(source);
  auto topology = read_node_topology(*source, {});
  ASSERT_FALSE(topology);
  EXPECT_NE(topology.error().find("not a node snapshot"), std::string::npos);
  EXPECT_FALSE(parse_topology_source("/nonexistent/dir"));
  // A single file is checked when it is read, which says what is wrong with it.
  source = parse_topology_source("nvidia-smi:/nonexistent.txt");
  ASSERT_TRUE(source);
  topology = read_node_topology(*source, {});
  ASSERT_FALSE(topology);
  EXPECT_EQ(topology.error(), "/nonexistent.txt: no such file");
  EXPECT_FALSE(parse_topology_source("hwloc:"));
}

TEST(LiveRead, ThisMachineReadsAndItsCaptureReplaysTheSame) {
  auto live = read_node_topology({}, {});
  ASSERT_TRUE(live) << live.error();
  EXPECT_FALSE(live->host.empty());
  EXPECT_NE(std::find(live->sources_used.begin(), live->sources_used.end(), FactSource::hwloc),
            live->sources_used.end());

  const TempDir scratch("nccltune-capture");
  const auto dir = scratch / "capture";  // capture_snapshot makes it
  auto captured = capture_snapshot(dir, {}, "test");
  ASSERT_TRUE(captured) << captured.error();
  EXPECT_TRUE(std::filesystem::exists(dir / "hwloc.xml"));
  EXPECT_TRUE(std::filesystem::exists(dir / "meta.yaml"));
  auto replayed = read_node_topology({TopologySource::Kind::snapshot, dir}, {});
  ASSERT_TRUE(replayed) << replayed.error();
  EXPECT_EQ(replayed->host, live->host);
  EXPECT_EQ(replayed->gpus.size(), live->gpus.size());
  EXPECT_EQ(replayed->nics.size(), live->nics.size());
  ASSERT_EQ(replayed->interfaces.size(), live->interfaces.size());
  for (size_t i = 0; i < live->interfaces.size(); ++i) {
    EXPECT_EQ(replayed->interfaces[i].name, live->interfaces[i].name);
    EXPECT_EQ(replayed->interfaces[i].pci, live->interfaces[i].pci);
  }
  EXPECT_EQ(replayed->gpudirect, live->gpudirect);
  for (size_t i = 0; i < live->interfaces.size(); ++i)
    EXPECT_EQ(replayed->interfaces[i].mtu, live->interfaces[i].mtu) << live->interfaces[i].name;
  for (size_t i = 0; i < live->gpus.size() && i < replayed->gpus.size(); ++i)
    EXPECT_EQ(replayed->gpus[i].iommu, live->gpus[i].iommu) << gpu_id(static_cast<int>(i));
  // A second capture into a non-empty directory is refused and leaves the first intact.
  auto again = capture_snapshot(dir, {}, "test");
  EXPECT_FALSE(again);
  EXPECT_TRUE(std::filesystem::exists(dir / "hwloc.xml"));
}

TEST(Capture, KeepsGidTablesMtusModulesAndTheKernelRelease) {
  // A made-up /sys and /proc: the capture copies what the readers read, and the copy reads the same.
  const TempDir scratch("nccltune-capture");
  const auto sys = scratch / "sys", proc = scratch / "proc";
  const auto port = sys / "class/infiniband/mlx5_0/ports/1";
  write_file(port / "link_layer", "Ethernet\n");
  write_file(port / "state", "4: ACTIVE\n");
  write_file(port / "gids/0", "fe80:0000:0000:0000:ba3f:d2ff:fe78:4500\n");
  write_file(port / "gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");  // unused
  write_file(port / "gids/3", "0000:0000:0000:0000:0000:ffff:0a00:0005\n");
  write_file(port / "gid_attrs/types/3", "RoCE v2\n");
  write_file(port / "gid_attrs/ndevs/3", "ens1f0np0\n");
  write_file(sys / "class/net/ens1f0np0/mtu", "9000\n");
  write_file(sys / "class/net/ens1f0np0/operstate", "up\n");
  write_file(sys / "module/nvidia/version", "550.54.15\n");
  write_file(sys / "module/nvidia_peermem/version", "550.54.15\n");
  std::filesystem::create_directories(sys / "kernel/iommu_groups");
  write_file(proc / "sys/kernel/osrelease", "6.8.0-45-generic\n");
  ReadOptions options;
  options.sys_root = sys;
  options.proc_root = proc;
  const auto dir = scratch / "snapshot";
  auto captured = capture_snapshot(dir, options, "test");
  ASSERT_TRUE(captured) << captured.error();
  EXPECT_FALSE(std::filesystem::exists(dir / "sysfs/class/infiniband/mlx5_0/ports/1/gids/1"));
  EXPECT_TRUE(std::filesystem::is_directory(dir / "sysfs/kernel/iommu_groups"));
  const SysfsSource live(sys), copy(dir / "sysfs");
  ASSERT_EQ(copy.rdma_devices().size(), 1u);
  EXPECT_EQ(copy.rdma_devices()[0].ports[0].gids, live.rdma_devices()[0].ports[0].gids);
  EXPECT_EQ(copy.net_interfaces().at(0).mtu, 9000);
  const auto facts = read_gpudirect_facts(dir / "sysfs", dir / "proc");
  EXPECT_EQ(facts, read_gpudirect_facts(sys, proc));
  EXPECT_EQ(facts.peer_memory, "nvidia_peermem");
  EXPECT_EQ(facts.kernel_release, "6.8.0-45-generic");
}
