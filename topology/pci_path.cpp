#include "topology/pci_path.h"

#include <algorithm>

namespace nccltune {

std::vector<std::string> pcie_switches_above(const PciPlacement& placement) {
  std::vector<std::string> switches;
  for (size_t i = 1; i < placement.bridges.size(); i += 2) switches.push_back(placement.bridges[i]);
  return switches;
}

LinkKind classify_pci_path(const PciPlacement& a, const PciPlacement& b) {
  const auto switches_a = pcie_switches_above(a);
  const auto switches_b = pcie_switches_above(b);
  if (a.host_bridge == b.host_bridge) {
    for (size_t i = 0; i < switches_a.size(); ++i) {
      auto it = std::find(switches_b.begin(), switches_b.end(), switches_a[i]);
      if (it == switches_b.end()) continue;
      const auto traversed = i + static_cast<size_t>(it - switches_b.begin()) + 1;
      return traversed == 1 ? LinkKind::pix : LinkKind::pxb;
    }
    return LinkKind::phb;
  }
  return a.locality == b.locality ? LinkKind::node : LinkKind::sys;
}

}  // namespace nccltune
