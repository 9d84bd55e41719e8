#include "topology/pci_path.h"

#include <gtest/gtest.h>

using namespace nccltune;

namespace {
// A device behind one PCIe switch: downstream port, upstream port, root port.
PciPlacement behind_switch(const std::string& dport, const std::string& uport, const std::string& root,
                           const std::string& host = "hb0", const std::string& numa = "0") {
  return {{dport, uport, root}, host, numa};
}
}  // namespace

TEST(PciPath, SameSwitchIsPixAlthoughHwlocShowsThreeBridges) {
  auto gpu = behind_switch("17:00.0", "16:00.0", "15:01.0");
  auto nic = behind_switch("17:01.0", "16:00.0", "15:01.0");
  EXPECT_EQ(pcie_switches_above(gpu), std::vector<std::string>{"16:00.0"});
  EXPECT_EQ(classify_pci_path(gpu, nic), LinkKind::pix);
}

TEST(PciPath, NestedSwitchesArePxb) {
  // DGX A100: NIC behind a second-level switch under the GPU's switch.
  auto gpu = behind_switch("d1", "u1", "rp");
  PciPlacement nic{{"d2", "u2", "d1b", "u1", "rp"}, "hb0", "0"};
  EXPECT_EQ(classify_pci_path(gpu, nic), LinkKind::pxb);
  EXPECT_EQ(classify_pci_path(nic, gpu), LinkKind::pxb);
}

TEST(PciPath, DifferentSwitchesUnderOneHostBridgeArePhb) {
  auto a = behind_switch("d1", "u1", "rp1");
  auto b = behind_switch("d2", "u2", "rp2");
  EXPECT_EQ(classify_pci_path(a, b), LinkKind::phb);
}

TEST(PciPath, DevicesOnRootPortsOrDirectlyOnTheHostBridgeArePhb) {
  PciPlacement a{{"rp1"}, "hb0", "0"};
  PciPlacement b{{}, "hb0", "0"};
  EXPECT_TRUE(pcie_switches_above(a).empty());
  EXPECT_EQ(classify_pci_path(a, b), LinkKind::phb);
}

TEST(PciPath, HostBridgesDecideNodeAndSys) {
  auto a = behind_switch("d1", "u1", "rp1", "hb0", "0");
  auto b = behind_switch("d2", "u2", "rp2", "hb1", "0");
  auto c = behind_switch("d3", "u3", "rp3", "hb2", "1");
  EXPECT_EQ(classify_pci_path(a, b), LinkKind::node);
  EXPECT_EQ(classify_pci_path(a, c), LinkKind::sys);
}
