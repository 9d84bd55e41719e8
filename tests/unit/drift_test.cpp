#include "drift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "checks.h"
#include "local_node_type.h"
#include "node_scan.h"
#include "topology_reader.h"

using namespace nccltune;

namespace {

DeviceState gpu(const std::string& id, const std::string& pci, int width = 16) {
  return {id, "NVIDIA H100 80GB HBM3", pci, {5, width, 5, 16}, std::nullopt, std::nullopt};
}

DeviceState nic(const std::string& id, const std::string& name, const std::string& state = "ACTIVE",
                double rate = 400) {
  return {id, name, "0000:19:00.0", {5, 16, 5, 16}, state, rate};
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
  settings.source = {TopologySource::Kind::snapshot, std::string(NCCLTUNE_FIXTURES) + "/" + snapshot};
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

TEST(Drift, ChangedNodeType) {
  NodeState now = four_gpus_two_nics();
  now.node_type_key = "h100.4gpu.nccl2.29";
  const auto drift = compare_with_last_good(four_gpus_two_nics(), now);
  EXPECT_EQ(kinds(drift), std::vector<std::string>{"node_type_changed node"});
  EXPECT_NE(drift[0].message.find("h100.4gpu.nccl2.29"), std::string::npos);
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
