// GPUDirect RDMA's prerequisites: what the kernel exposes (peer-memory modules, kernel release,
// the NVIDIA module's flavour, IOMMU groups), how they are judged, and check's verdicts on them.
#include "topology/gpudirect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_files.h"
#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/sources/gpudirect_source.h"
#include "topology/sources/sysfs_source.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

// GPU0 and NIC0 under one switch, with the given kernel facts and every device's IOMMU domain.
NodeTopology gdr_node(GpuDirectFacts facts, IommuDomain iommu = std::nullopt) {
  NodeTopology t;
  t.host = "test";
  Gpu g;
  g.iommu = iommu;
  t.gpus.push_back(g);
  Nic nic;
  nic.name = "mlx5_0";
  nic.state = "ACTIVE";
  nic.link_layer = "InfiniBand";
  nic.iommu = iommu;
  t.nics.push_back(nic);
  t.set_link("GPU0", "NIC0", {LinkKind::pix, 0}, FactSource::hwloc);
  t.driver_version = "550.54.15";
  t.gpudirect = std::move(facts);
  return t;
}

GpuDirectFacts facts(std::optional<std::string> peer_memory, std::optional<std::string> kernel,
                     std::optional<bool> open) {
  return {std::move(peer_memory), std::move(kernel), open, std::nullopt};
}

const Finding* find(const CheckReport& r, const std::string& check) {
  auto it =
      std::find_if(r.findings.begin(), r.findings.end(), [&](const Finding& f) { return f.check == check; });
  return it == r.findings.end() ? nullptr : &*it;
}

}  // namespace

TEST(GpuDirect, KernelAndDriverVersions) {
  EXPECT_EQ(kernel_version("5.15.0-105-generic"), std::pair(5, 15));
  EXPECT_EQ(kernel_version("6.8.0-1013-nvidia-64k"), std::pair(6, 8));
  EXPECT_EQ(kernel_version("5.4"), std::pair(5, 4));
  EXPECT_FALSE(kernel_version("Linux"));
  EXPECT_FALSE(kernel_version("5"));
  EXPECT_FALSE(kernel_version(""));
  EXPECT_EQ(driver_branch("550.54.15"), 550);
  EXPECT_FALSE(driver_branch("unknown"));
}

TEST(GpuDirect, HowGpuMemoryIsRegistered) {
  EXPECT_EQ(gdr_memory(gdr_node(facts("nvidia_peermem", "5.4.0", false))).how, GdrRegistration::peer_memory);
  EXPECT_EQ(gdr_memory(gdr_node(facts("", "6.8.0-1013-nvidia-64k", true))).how, GdrRegistration::dma_buf);
  EXPECT_EQ(gdr_memory(gdr_node(facts("", "5.12.0", true))).how, GdrRegistration::dma_buf);
  const GdrMemory old_kernel = gdr_memory(gdr_node(facts("", "5.11.22", true)));
  EXPECT_EQ(old_kernel.how, GdrRegistration::none);
  EXPECT_EQ(old_kernel.detail, "kernel 5.11.22 is older than 5.12");
  const GdrMemory proprietary = gdr_memory(gdr_node(facts("", "6.8.0", false)));
  EXPECT_EQ(proprietary.how, GdrRegistration::none);
  EXPECT_NE(proprietary.detail.find("proprietary"), std::string::npos);
  auto old_driver = gdr_node(facts("", "6.8.0", true));
  old_driver.driver_version = "470.256.02";
  EXPECT_EQ(gdr_memory(old_driver).how, GdrRegistration::none);
  EXPECT_EQ(gdr_memory(gdr_node(facts("", std::nullopt, true))).how, GdrRegistration::unknown);
  EXPECT_EQ(gdr_memory(gdr_node(facts(std::nullopt, "6.8.0", true))).detail, "") << "modules not read";
}

TEST(GpuDirect, FactsAreReadBelowTheSysAndProcRoots) {
  const TempDir root("nccltune-gdr");
  const auto sys = root / "sys", proc = root / "proc";
  std::filesystem::create_directories(sys);
  EXPECT_FALSE(read_gpudirect_facts(sys, proc).peer_memory) << "no module/: not captured";
  write_file(sys / "module/nvidia/version", "550.54.15\n");
  write_file(sys / "module/nvidia/taint", "POE\n");
  write_file(proc / "sys/kernel/osrelease", "5.4.0-216-generic\n");
  GpuDirectFacts read = read_gpudirect_facts(sys, proc);
  EXPECT_EQ(read.peer_memory, "");
  EXPECT_EQ(read.kernel_release, "5.4.0-216-generic");
  EXPECT_EQ(read.open_kernel_module, false) << "taint P";
  EXPECT_EQ(read.nvidia_module_version, "550.54.15");
  write_file(
      proc / "driver/nvidia/version",
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build\nGCC version: 12\n");
  EXPECT_EQ(read_gpudirect_facts(sys, proc).open_kernel_module, true) << "the banner wins over the taint";
  write_file(sys / "kernel/mm/memory_peers/nv_mem/version", "1.3\n");
  EXPECT_EQ(read_gpudirect_facts(sys, proc).peer_memory, "nv_mem peer client");
  write_file(sys / "module/nv_peer_mem/initstate", "live\n");
  EXPECT_EQ(read_gpudirect_facts(sys, proc).peer_memory, "nv_peer_mem");
  write_file(sys / "module/nvidia_peermem/version", "550.54.15\n");
  EXPECT_EQ(read_gpudirect_facts(sys, proc).peer_memory, "nvidia_peermem");
}

TEST(GpuDirect, IommuDomainFromTheDevicesGroup) {
  const TempDir root("nccltune-gdr");
  const auto sys = root.path();
  const auto dev = [&](const std::string& pci) { return sys / "bus/pci/devices" / pci; };
  write_file(dev("0000:18:00.0") / "vendor", "0x10de\n");
  write_file(dev("0000:19:00.0") / "vendor", "0x15b3\n");
  write_file(dev("0000:1a:00.0") / "vendor", "0x15b3\n");
  const SysfsSource source(sys);
  EXPECT_FALSE(source.iommu_domain("0000:18:00.0")) << "no kernel/iommu_groups: unknown";
  write_file(sys / "kernel/iommu_groups/7/type", "DMA-FQ\n");
  std::filesystem::create_symlink("../../../../kernel/iommu_groups/7", dev("0000:18:00.0") / "iommu_group");
  std::filesystem::create_symlink("../../../../etc", dev("0000:1a:00.0") / "iommu_group");
  EXPECT_EQ(source.iommu_domain("0000:18:00.0"), "DMA-FQ");
  EXPECT_EQ(source.iommu_domain("0000:19:00.0"), "none") << "no group: no IOMMU";
  EXPECT_FALSE(source.iommu_domain("0000:1a:00.0")) << "a link that names no group";
  EXPECT_FALSE(source.iommu_domain("0000:99:00.0")) << "no such device";
  EXPECT_TRUE(iommu_translates("DMA"));
  EXPECT_TRUE(iommu_translates("DMA-FQ"));
  EXPECT_FALSE(iommu_translates("identity"));
  EXPECT_FALSE(iommu_translates("none"));
}

TEST(GpuDirectChecks, PeermemLoadedAndPassthroughAreReady) {
  const auto report = check_node(gdr_node(facts("nvidia_peermem", "5.15.0", false), "identity"), {});
  EXPECT_EQ(report.exit_code(), 0);
  ASSERT_TRUE(find(report, "gdr_peer_memory"));
  EXPECT_EQ(find(report, "gdr_peer_memory")->verdict, Verdict::pass);
  EXPECT_EQ(find(report, "gdr_iommu")->verdict, Verdict::pass);
  ASSERT_TRUE(report.gdr);
  EXPECT_TRUE(report.gdr->ready);
}

TEST(GpuDirectChecks, NoPeermemOnAnOldKernelBlocksGdrAndSaysWhatNcclDoes) {
  const auto t = gdr_node(facts("", "5.4.0-216-generic", false), "none");
  const auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 1);
  const Finding* f = find(report, "gdr_peer_memory");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("kernel 5.4.0-216-generic is older than 5.12"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("GPUDirect RDMA is off whatever NCCL_NET_GDR_LEVEL says"), std::string::npos);
  EXPECT_NE(f->message.find("staged through host memory"), std::string::npos);
  EXPECT_NE(f->message.find("modprobe nvidia_peermem"), std::string::npos);
  ASSERT_TRUE(report.gdr);
  EXPECT_FALSE(report.gdr->ready);
  EXPECT_EQ(report.gdr->blocked_by, std::vector<std::string>{"gdr_peer_memory"});
  EXPECT_NE(render_check_text(t, report, CheckDetail::every_check)
                .find("GPUDirect RDMA: blocked by gdr_peer_memory"),
            std::string::npos);
}

TEST(GpuDirectChecks, DmaBufOnARecentKernelWithTheOpenModuleIsReady) {
  const auto report = check_node(gdr_node(facts("", "6.8.0-1013-nvidia-64k", true)), {});
  EXPECT_EQ(report.exit_code(), 0);
  const Finding* f = find(report, "gdr_peer_memory");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::pass);
  EXPECT_NE(f->message.find("dma-buf (kernel 6.8.0-1013-nvidia-64k, open kernel module 550.54.15)"),
            std::string::npos)
      << f->message;
  EXPECT_FALSE(find(report, "gdr_iommu")) << "IOMMU unknown: not judged";
  ASSERT_TRUE(report.gdr);
  EXPECT_TRUE(report.gdr->ready);
}

TEST(GpuDirectChecks, AnIommuInDmaModeBlocksGdr) {
  const auto report = check_node(gdr_node(facts("nvidia_peermem", "5.15.0", false), "DMA"), {});
  EXPECT_EQ(report.exit_code(), 1);
  const Finding* f = find(report, "gdr_iommu");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("translates the DMA of GPU0, NIC0 (group type DMA)"), std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("iommu=pt"), std::string::npos);
  EXPECT_EQ(report.gdr->blocked_by, std::vector<std::string>{"gdr_iommu"});
}

TEST(GpuDirectChecks, AcsRedirectAboveAGpuIsABlockerToo) {
  auto t = gdr_node(facts("nvidia_peermem", "5.15.0", false), "identity");
  t.bridges.push_back({"0000:17:00.0", {}, true, {"GPU0"}});
  const auto report = check_node(t, {});
  ASSERT_TRUE(report.gdr);
  EXPECT_EQ(report.gdr->blocked_by, std::vector<std::string>{"pcie_acs"});
  const auto doc = check_to_json(t, report);
  EXPECT_EQ(doc["gpudirect_rdma"]["ready"], false);
  EXPECT_EQ(doc["gpudirect_rdma"]["blocked_by"][0], "pcie_acs");
}

TEST(GpuDirectChecks, UnknownFactsSayNothingAndNodesWithoutNicsAreNotJudged) {
  auto report = check_node(gdr_node(facts(std::nullopt, std::nullopt, std::nullopt)), {});
  EXPECT_FALSE(find(report, "gdr_peer_memory"));
  EXPECT_FALSE(report.gdr);
  report = check_node(gdr_node(facts("", std::nullopt, std::nullopt)), {});
  ASSERT_TRUE(find(report, "gdr_peer_memory"));
  EXPECT_EQ(find(report, "gdr_peer_memory")->verdict, Verdict::warn) << "no module, dma-buf cannot be told";
  EXPECT_FALSE(report.gdr) << "not known to be blocked";
  auto no_nic = gdr_node(facts("", "5.4.0", false));
  no_nic.nics.clear();
  EXPECT_FALSE(find(check_node(no_nic, {}), "gdr_peer_memory"));
}
