#include "daemon/drift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "daemon/node_scan.h"
#include "test_files.h"
#include "topology/checks.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using nccltune::test_support::fixture;

namespace {

DeviceState gpu(const std::string& id, const std::string& pci, int width = 16) {
  return {.id = id, .name = "NVIDIA H100 80GB HBM3", .pci = pci, .pcie = {5, width, 5, 16}};
}

DeviceState nic(const std::string& id, const std::string& name, const std::string& state = "ACTIVE",
                double rate = 400) {
  return {.id = id,
          .name = name,
          .pci = "0000:19:00.0",
          .pcie = {5, 16, 5, 16},
          .port_state = state,
          .rate_gbps = rate};
}

NodeState four_gpus_two_nics() {
  NodeState s;
  s.node_type_key = "h100.4gpu";
  s.gpus = {gpu("GPU0", "0000:18:00.0"), gpu("GPU1", "0000:2a:00.0"), gpu("GPU2", "0000:3a:00.0"),
            gpu("GPU3", "0000:5d:00.0")};
  s.nics = {nic("NIC0", "mlx5_0"), nic("NIC1", "mlx5_1")};
  return s;
}

std::vector<std::string> kinds(const std::vector<DriftEntry>& drift) {
  std::vector<std::string> out;
  for (const auto& d : drift) out.push_back(d.kind + " " + d.subject);
  std::sort(out.begin(), out.end());
  return out;
}

NodeState scanned(const std::string& snapshot) {
  ScanSettings settings;
  settings.source = {TopologySource::Kind::snapshot, fixture(snapshot)};
  settings.versions.nccl = "2.28.9";
  const ScanResult scan = scan_node(settings, std::chrono::system_clock::now());
  EXPECT_TRUE(scan.facts_read) << snapshot;
  return scan.state;
}

}  // namespace

TEST(Drift, NoneWhenNothingChanged) {
  EXPECT_TRUE(compare_with_last_good(four_gpus_two_nics(), four_gpus_two_nics()).empty());
}

TEST(Drift, AMissingGpuIsFoundByItsPciAddressWhenTheOthersAreRenumbered) {
  NodeState now = four_gpus_two_nics();
  now.gpus = {gpu("GPU0", "0000:18:00.0"), gpu("GPU1", "0000:2a:00.0"), gpu("GPU2", "0000:5d:00.0")};
  const auto drift = compare_with_last_good(four_gpus_two_nics(), now);
  EXPECT_EQ(kinds(drift), std::vector<std::string>{"gpu_missing GPU2 0000:3a:00.0"});
  EXPECT_NE(drift[0].message.find("0000:3a:00.0"), std::string::npos);
}

TEST(Drift, NarrowerLinkOnlyWhenBothWidthsAreKnown) {
  NodeState now = four_gpus_two_nics();
  now.gpus[1].pcie.width = 8;
  now.gpus[2].pcie.width.reset();  // a degraded source: unknown is not drift
  const auto drift = compare_with_last_good(four_gpus_two_nics(), now);
  EXPECT_EQ(kinds(drift), std::vector<std::string>{"link_narrower GPU1 0000:2a:00.0"});
  EXPECT_NE(drift[0].message.find("x8, was x16"), std::string::npos) << drift[0].message;
}

TEST(Drift, PortDownIsReportedWithoutItsMeaninglessRate) {
  NodeState now = four_gpus_two_nics();
  now.nics[1] = nic("NIC1", "mlx5_1", "DOWN", 10);
  const auto drift = compare_with_last_good(four_gpus_two_nics(), now);
  EXPECT_EQ(kinds(drift), std::vector<std::string>{"port_not_active NIC1 mlx5_1"});
  EXPECT_NE(drift[0].message.find("DOWN"), std::string::npos);
}

TEST(Drift, SlowerActivePortAndMissingNic) {
  NodeState now = four_gpus_two_nics();
  now.nics = {nic("NIC0", "mlx5_0", "ACTIVE", 200)};
  EXPECT_EQ(kinds(compare_with_last_good(four_gpus_two_nics(), now)),
            (std::vector<std::string>{"nic_missing NIC1 mlx5_1", "nic_rate_lower NIC0 mlx5_0"}));
}

NodeState typed(int gpus, const std::string& nccl, std::optional<int> nics = 2) {
  NodeState s = four_gpus_two_nics();
  s.node_type.gpu = "NVIDIA H100 80GB HBM3";
  s.node_type.gpus = gpus;
  s.node_type.gpu_sm = 90;
  s.node_type.nvswitch = false;
  s.node_type.nics = nics;
  s.node_type.nic = "mlx5 InfiniBand 400 Gb/s";
  s.node_type.nic_rate_gbps = 400;
  s.node_type.gpu_nic_affinity = "PIX";
  s.node_type.nccl_version = nccl;
  s.node_type.cuda_driver = "13.0";
  s.node_type_key = node_type_key(s.node_type);
  return s;
}

TEST(Drift, ChangedNodeTypeHardware) {
  const auto drift = compare_with_last_good(typed(4, "2.28.9"), typed(3, "2.28.9"));
  EXPECT_EQ(kinds(drift), std::vector<std::string>{"node_type_changed node"});
  EXPECT_EQ(
      drift[0].message,
      "node type is h100-80gb-hbm3.3gpu.2xib400.pix.nccl2.28, was h100-80gb-hbm3.4gpu.2xib400.pix.nccl2.28 "
      "(gpus 3, was 4)");
}

TEST(Drift, LeavingTheMultiNodeNvlinkDomainIsDrift) {
  // A GPU of an NVL72 tray whose fabric registration is lost: NCCL no longer uses MNNVL.
  NodeState was = typed(4, "2.28.9");
  was.node_type.mnnvl = true;
  was.node_type_key = node_type_key(was.node_type);
  const auto drift = compare_with_last_good(was, typed(4, "2.28.9"));
  ASSERT_EQ(kinds(drift), std::vector<std::string>{"node_type_changed node"});
  EXPECT_NE(drift[0].message.find("(mnnvl false, was true)"), std::string::npos) << drift[0].message;
}

TEST(Drift, ANewNcclOrCudaDriverIsNotDrift) {
  NodeState now = typed(4, "2.29.1");
  now.node_type.cuda_driver = "13.1";
  now.node_type_key = node_type_key(now.node_type);
  ASSERT_NE(now.node_type_key, typed(4, "2.28.9").node_type_key);
  EXPECT_TRUE(compare_with_last_good(typed(4, "2.28.9"), now).empty());
}

TEST(Drift, AnUnreadableNcclIsNotDrift) {
  // The key says nccl (no version) when libnccl cannot be loaded: unknown, not changed.
  EXPECT_TRUE(compare_with_last_good(typed(4, "2.28.9"), typed(4, "")).empty());
}

TEST(Drift, NodeTypeFieldsUnknownOnEitherSideAreSkipped) {
  NodeState degraded = typed(4, "2.28.9", std::nullopt);  // e.g. NVML and hwloc failed
  degraded.node_type.gpu.clear();
  degraded.node_type.gpu_sm = 0;
  degraded.node_type.nvswitch.reset();
  degraded.node_type.nic.clear();
  degraded.node_type.nic_rate_gbps = 0;
  degraded.node_type.gpu_nic_affinity.clear();
  degraded.node_type_key = node_type_key(degraded.node_type);
  EXPECT_TRUE(compare_with_last_good(typed(4, "2.28.9"), degraded).empty());
  EXPECT_TRUE(compare_with_last_good(degraded, typed(4, "2.28.9")).empty());
  // Each known field that differs is named.
  NodeState now = typed(4, "2.28.9", 1);
  now.node_type.nic = "mlx5 Ethernet 200 Gb/s";
  now.node_type.nic_rate_gbps = 200;
  const auto drift = compare_with_last_good(typed(4, "2.28.9"), now);
  ASSERT_EQ(kinds(drift), std::vector<std::string>{"node_type_changed node"});
  EXPECT_NE(
      drift[0].message.find("(nics 1, was 2; nic 'mlx5 Ethernet 200 Gb/s', was 'mlx5 InfiniBand 400 Gb/s'; "
                            "nic_rate_gbps 200, was 400)"),
      std::string::npos)
      << drift[0].message;
}

TEST(Drift, AdditionsAndImprovementsAreNotDrift) {
  NodeState was = four_gpus_two_nics();
  was.gpus[0].pcie.width = 8;
  was.nics[0].port_state = "DOWN";
  NodeState now = four_gpus_two_nics();
  now.gpus.push_back(gpu("GPU4", "0000:9a:00.0"));
  now.nics.push_back(nic("NIC2", "mlx5_2"));
  EXPECT_TRUE(compare_with_last_good(was, now).empty());
}

TEST(Drift, DevicesWithoutIdentityAreMatchedById) {
  NodeState was = four_gpus_two_nics(), now = four_gpus_two_nics();
  for (auto* s : {&was, &now})
    for (auto& g : s->gpus) g.pci.reset();  // e.g. an nvidia-smi-only source
  now.gpus.pop_back();
  EXPECT_EQ(kinds(compare_with_last_good(was, now)), std::vector<std::string>{"gpu_missing GPU3"});
}

TEST(Drift, SnapshotOfADriftedNodeAgainstItsHealthyOne) {
  const auto drift = compare_with_last_good(scanned("nodes/dgx-h100"), scanned("daemon/h100-drifted"));
  EXPECT_EQ(kinds(drift),
            (std::vector<std::string>{"gpu_missing GPU7 0000:db:00.0", "link_narrower GPU2 0000:3a:00.0",
                                      "node_type_changed node", "port_not_active NIC5 mlx5_5"}));
}
