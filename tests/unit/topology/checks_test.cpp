#include "topology/checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_files.h"
#include "topology/affinity.h"

using namespace nccltune;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

// n GPUs and n NICs; GPU i and NIC i share a switch (PIX), everything else is SYS.
NodeTopology paired_node(int n) {
  NodeTopology t;
  t.host = "test";
  for (int i = 0; i < n; ++i) {
    Gpu g;
    g.index = i;
    g.numa = i < n / 2 ? 0 : 1;
    g.pcie = {5, 16, 5, 16};
    t.gpus.push_back(g);
    Nic nic;
    nic.index = i;
    nic.name = "mlx5_" + std::to_string(i);
    nic.numa = g.numa;
    nic.state = "ACTIVE";
    nic.rate_gbps = 400;
    nic.link_layer = "InfiniBand";
    nic.pcie = {5, 16, 5, 16};
    t.nics.push_back(nic);
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      t.set_link(gpu_id(i), nic_id(j), {i == j ? LinkKind::pix : LinkKind::sys, 0}, FactSource::hwloc);
  return t;
}

const Finding* find(const CheckReport& r, const std::string& check, const std::string& subject) {
  auto it = std::find_if(r.findings.begin(), r.findings.end(), [&](const Finding& f) {
    return f.check == check && f.subject.rfind(subject, 0) == 0;
  });
  return it == r.findings.end() ? nullptr : &*it;
}

}  // namespace

TEST(Checks, HealthyNodePassesAndRecommendsEveryNic) {
  auto report = check_node(paired_node(4), {});
  EXPECT_EQ(report.exit_code(), 0);
  ASSERT_FALSE(report.recommendations.empty());
  EXPECT_EQ(report.recommendations[0].name, "NCCL_IB_HCA");
  EXPECT_EQ(report.recommendations[0].value, "=mlx5_0,mlx5_1,mlx5_2,mlx5_3");
}

TEST(Checks, Bar1SmallerThanMemoryWarnsWhereThereAreRdmaNics) {
  NodeTopology t = paired_node(2);
  t.gpus[0].memory_bytes = 24564ull << 20;
  t.gpus[0].bar1_bytes = 256ull << 20;  // a consumer board without Resizable BAR
  t.gpus[1].memory_bytes = 80ull << 30;
  t.gpus[1].bar1_bytes = 128ull << 30;
  auto report = check_node(t, {});
  const Finding* small = find(report, "bar1", "GPU0");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->verdict, Verdict::warn);
  EXPECT_NE(small->message.find("BAR1 256 MiB, memory 24564 MiB"), std::string::npos) << small->message;
  const Finding* full = find(report, "bar1", "GPU1");
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->verdict, Verdict::pass);
  EXPECT_EQ(report.exit_code(), 1);

  t.gpus[0].bar1_bytes.reset();  // unknown (Grace trays say N/A): not judged
  EXPECT_EQ(find(check_node(t, {}), "bar1", "GPU0"), nullptr);
  NodeTopology no_nics;  // no RDMA NIC: GPUDirect RDMA does not apply
  no_nics.gpus = t.gpus;
  no_nics.gpus[0].bar1_bytes = 256ull << 20;
  EXPECT_EQ(find(check_node(no_nics, {}), "bar1", "GPU0"), nullptr);
}

TEST(Checks, NarrowLinkFailsAndSlowLinkWarns) {
  auto t = paired_node(2);
  t.gpus[0].pcie.width = 8;
  t.gpus[1].pcie.gen = 1;
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 2);
  ASSERT_TRUE(find(report, "pcie_link", "GPU0"));
  EXPECT_EQ(find(report, "pcie_link", "GPU0")->verdict, Verdict::fail);
  EXPECT_NE(find(report, "pcie_link", "GPU0")->message.find("x8"), std::string::npos);
  EXPECT_EQ(find(report, "pcie_link", "GPU1")->verdict, Verdict::warn);
}

TEST(Checks, DownPortFailsAndIsLeftOutOfNcclIbHca) {
  auto t = paired_node(2);
  t.nics[1].state = "DOWN";
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 2);
  EXPECT_EQ(find(report, "nic_port", "NIC1")->verdict, Verdict::fail);
  EXPECT_EQ(report.recommendations[0].value, "=mlx5_0");
}

TEST(Checks, RateBelowExpectationFails) {
  Expectation expect;
  expect.nic_rate_gbps = 800;
  auto report = check_node(paired_node(2), expect);
  EXPECT_EQ(find(report, "nic_port", "NIC0")->verdict, Verdict::fail);
}

TEST(Checks, NearestNicBeyondPxbWarnsAboutGpuDirect) {
  auto t = paired_node(2);
  t.set_link("GPU0", "NIC0", {LinkKind::node, 0}, FactSource::hwloc);
  t.set_link("GPU1", "NIC1", {LinkKind::phb, 0}, FactSource::hwloc);
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 1);
  const Finding* f = find(report, "gpu_nic_affinity", "GPU0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("GPUDirect RDMA"), std::string::npos);
}

TEST(Checks, NearestNicOnAnotherNumaNodeFailsWhenOwnNodeHasNics) {
  auto t = paired_node(2);  // GPU0/NIC0 on NUMA 0, GPU1/NIC1 on NUMA 1
  t.nics[1].numa = 0;       // ... but NIC1's NUMA says 0: GPU1's nearest is across NUMA
  t.nics[0].numa = 1;
  auto report = check_node(t, {});
  EXPECT_EQ(find(report, "gpu_nic_affinity", "GPU0")->verdict, Verdict::fail);
}

namespace {

// A Grace tray in small: GPU i and NIC i on NUMA node (Grace) i, every GPU-NIC pair NODE within
// a Grace and SYS across, as on GB200 where each device has its own host bridge.
NodeTopology grace_node(std::optional<bool> c2c) {
  auto t = paired_node(2);
  t.gpus[1].numa = t.nics[1].numa = 1;
  for (int g = 0; g < 2; ++g) {
    t.gpus[static_cast<size_t>(g)].c2c = c2c;
    for (int n = 0; n < 2; ++n)
      t.set_link(gpu_id(g), nic_id(n), {g == n ? LinkKind::node : LinkKind::sys, 0}, FactSource::hwloc);
  }
  return t;
}

}  // namespace

TEST(Checks, NvlinkC2cToTheNicsGracePassesNamingC2c) {
  auto report = check_node(grace_node(true), {});
  EXPECT_EQ(report.exit_code(), 0);
  for (const char* gpu : {"GPU0", "GPU1"}) {
    const Finding* f = find(report, "gpu_nic_affinity", gpu);
    ASSERT_TRUE(f) << gpu;
    EXPECT_EQ(f->verdict, Verdict::pass) << f->message;
    EXPECT_NE(f->message.find("NVLink-C2C"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("NCCL_NET_GDR_C2C"), std::string::npos) << f->message;
  }
}

TEST(Checks, ExpectingC2cAcceptsAGraceTrayAndNothingFartherThanPxbWithoutIt) {
  Expectation expect;
  expect.max_gpu_nic_link = LinkKind::pxb;
  expect.gpu_nic_link_c2c = true;
  EXPECT_EQ(check_node(grace_node(true), expect).exit_code(), 0);
  const auto without = check_node(grace_node(std::nullopt), expect);
  EXPECT_EQ(without.exit_code(), 2);
  const Finding* f = find(without, "gpu_nic_affinity", "GPU0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::fail);
  EXPECT_NE(f->message.find("farther than the expected C2C"), std::string::npos) << f->message;
  expect.gpu_nic_link_c2c = false;  // PXB: NCCL ranks its P2C path after PXB
  EXPECT_EQ(check_node(grace_node(true), expect).exit_code(), 2);
}

TEST(Checks, UnknownOrAbsentC2cStillWarnsAboutGpuDirect) {
  for (std::optional<bool> c2c : {std::optional<bool>(), std::optional<bool>(false)}) {
    auto report = check_node(grace_node(c2c), {});
    EXPECT_EQ(report.exit_code(), 1);
    const Finding* f = find(report, "gpu_nic_affinity", "GPU0");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->verdict, Verdict::warn);
    EXPECT_NE(f->message.find("GPUDirect RDMA is off"), std::string::npos) << f->message;
  }
}

TEST(Checks, C2cDoesNotReachANicOnTheOtherGrace) {
  auto t = grace_node(true);
  t.nics.pop_back();  // GPU1's Grace has no NIC: its nearest is NIC0, on GPU0's Grace, at SYS
  t.links.erase(
      std::remove_if(t.links.begin(), t.links.end(), [](const DeviceLink& l) { return l.b == "NIC1"; }),
      t.links.end());
  auto report = check_node(t, {});
  ASSERT_EQ(report.assignments[1].nic, 0);
  EXPECT_EQ(find(report, "gpu_nic_affinity", "GPU0")->verdict, Verdict::pass);
  const Finding* f = find(report, "gpu_nic_affinity", "GPU1");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn) << f->message;
  EXPECT_EQ(f->message.find("C2C"), std::string::npos) << f->message;
}

TEST(Checks, C2cNeedsBothNumaNodesKnown) {
  auto t = grace_node(true);
  t.nics[0].numa.reset();
  auto report = check_node(t, {});  // named: the finding points into it
  const Finding* f = find(report, "gpu_nic_affinity", "GPU0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn) << f->message;
}

TEST(Checks, CrowdedNicWarnsWhileAnotherServesNone) {
  auto t = paired_node(2);
  // NIC1 is far from both GPUs; NIC0 is near both.
  t.set_link("GPU1", "NIC0", {LinkKind::pix, 0}, FactSource::hwloc);
  t.set_link("GPU1", "NIC1", {LinkKind::sys, 0}, FactSource::hwloc);
  t.gpus[1].numa = 0;
  auto report = check_node(t, {});
  const Finding* f = find(report, "nic_balance", "NIC0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, Verdict::warn);
  EXPECT_NE(f->message.find("mlx5_1"), std::string::npos);
}

TEST(Checks, AcsRedirectAboveAGpuWarns) {
  auto t = paired_node(1);
  t.bridges.push_back({"0000:17:00.0", {}, true, {"GPU0"}});
  t.bridges.push_back({"0000:17:01.0", {}, false, {"NIC0"}});
  auto report = check_node(t, {});
  EXPECT_EQ(report.exit_code(), 1);
  ASSERT_TRUE(find(report, "pcie_acs", "bridge 0000:17:00.0"));
  EXPECT_FALSE(find(report, "pcie_acs", "bridge 0000:17:01.0"));
}

TEST(Checks, ExpectationsOnCountsAndLinkType) {
  Expectation expect;
  expect.gpus = 8;
  expect.nics = 2;
  expect.max_gpu_nic_link = LinkKind::pix;
  auto t = paired_node(2);
  t.set_link("GPU1", "NIC1", {LinkKind::pxb, 0}, FactSource::hwloc);
  auto report = check_node(t, expect);
  EXPECT_EQ(report.exit_code(), 2);
  EXPECT_EQ(find(report, "device_count", "node")->verdict, Verdict::fail);
  EXPECT_EQ(find(report, "gpu_nic_affinity", "GPU1")->verdict, Verdict::fail);
  EXPECT_EQ(find(report, "gpu_nic_affinity", "GPU0")->verdict, Verdict::pass);
}

TEST(Affinity, TiesSpreadGpuPairsOverTheirNics) {
  // DGX A100: GPU0 and GPU1 both see NIC0 and NIC1 at PXB.
  NodeTopology t;
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    t.gpus.push_back(g);
    Nic n;
    n.index = i;
    t.nics.push_back(n);
  }
  for (int g = 0; g < 2; ++g)
    for (int n = 0; n < 2; ++n) t.set_link(gpu_id(g), nic_id(n), {LinkKind::pxb, 0}, FactSource::hwloc);
  auto a = assign_nearest_nics(t);
  EXPECT_EQ(a[0].nic, 0);
  EXPECT_EQ(a[1].nic, 1);
}

TEST(Affinity, NumaDecidesWhenThePciTreeShowsOnlySys) {
  // Grace tray: every GPU-NIC pair SYS; the NIC on the GPU's NUMA node is the near one.
  NodeTopology t;
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.numa = i;
    t.gpus.push_back(g);
    Nic n;
    n.index = i;
    n.numa = 1 - i;
    t.nics.push_back(n);
  }
  for (int g = 0; g < 2; ++g)
    for (int n = 0; n < 2; ++n) t.set_link(gpu_id(g), nic_id(n), {LinkKind::sys, 0}, FactSource::hwloc);
  auto a = assign_nearest_nics(t);
  EXPECT_EQ(a[0].nic, 1);
  EXPECT_EQ(a[1].nic, 0);
  EXPECT_TRUE(a[0].numa_decided);
  EXPECT_EQ(check_node(t, {}).exit_code(), 0);
}

TEST(Expectation, ReadsKnownKeysAndRejectsUnknownOnesNamingThem) {
  const TempDir dir("nccltune-expect");
  write_file(dir / "good.yaml", "gpus: 8\nnics: 8\nnic_rate_gbps: 400\nmax_gpu_nic_link: PIX\n");
  write_file(dir / "typo.yaml", "gpus: 8\nnic_rate: 400\n");
  write_file(dir / "badlink.yaml", "max_gpu_nic_link: NV18\n");
  write_file(dir / "grace.yaml", "max_gpu_nic_link: C2C\n");
  write_file(dir / "broken.yaml", "gpus: [8\n");
  auto good = read_expectation(dir / "good.yaml");
  ASSERT_TRUE(good) << good.error();
  EXPECT_EQ(good->gpus, 8);
  EXPECT_EQ(good->max_gpu_nic_link, LinkKind::pix);
  auto typo = read_expectation(dir / "typo.yaml");
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().find("typo.yaml"), std::string::npos);
  EXPECT_NE(typo.error().find("nic_rate"), std::string::npos);
  EXPECT_FALSE(read_expectation(dir / "badlink.yaml"));
  auto grace = read_expectation(dir / "grace.yaml");
  ASSERT_TRUE(grace) << grace.error();
  EXPECT_EQ(grace->max_gpu_nic_link, LinkKind::pxb);
  EXPECT_TRUE(grace->gpu_nic_link_c2c);
  EXPECT_FALSE(good->gpu_nic_link_c2c);
  auto broken = read_expectation(dir / "broken.yaml");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().find("broken.yaml"), std::string::npos);
}

// fleet reads its thresholds from the same file, under the names its flags have.
TEST(Expectation, HoldsTheFleetThresholdsUnderTheirFlagNames) {
  const TempDir dir("nccltune-expect");
  write_file(dir / "fleet.yaml", "gpus: 8\nmin_peak_pct: 75\noutlier: 0.9\n");
  write_file(dir / "pct.yaml", "min_peak_pct: 120\n");
  write_file(dir / "outlier.yaml", "outlier: 1.2\n");
  auto fleet = read_expectation(dir / "fleet.yaml");
  ASSERT_TRUE(fleet) << fleet.error();
  EXPECT_EQ(fleet->min_peak_pct, 75);
  EXPECT_EQ(fleet->outlier, 0.9);
  for (const char* bad : {"pct.yaml", "outlier.yaml"}) {
    auto read = read_expectation(dir / bad);
    ASSERT_FALSE(read) << bad;
    EXPECT_NE(read.error().find(bad), std::string::npos) << read.error();
  }
  EXPECT_NE(read_expectation(dir / "pct.yaml").error().find("min_peak_pct"), std::string::npos);
  EXPECT_NE(read_expectation(dir / "outlier.yaml").error().find("outlier"), std::string::npos);
  Expectation gpus_only;
  gpus_only.gpus = 8;
  EXPECT_EQ(check_node(NodeTopology{}, *fleet).exit_code(), check_node(NodeTopology{}, gpus_only).exit_code());
}
