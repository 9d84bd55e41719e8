// Classifies the PCIe path between two devices with nvidia-smi's definitions, counting a whole
// PCIe switch (upstream port + downstream port) as one bridge, as NCCL and nvidia-smi do.
#pragma once

#include <string>
#include <vector>

#include "topology/link_type.h"

namespace nccltune {

// Where a device sits in the PCI tree.
struct PciPlacement {
  // PCI bridges from the device's parent up to, not including, the host bridge: for a GPU
  // behind a switch, {downstream port, upstream port, root port}.
  std::vector<std::string> bridges;
  std::string host_bridge;  // an id of the host bridge (PCI root complex)
  std::string locality;     // an id of the CPU-side object it hangs from (its NUMA node)
};

// The PCIe switches a device traverses, nearest first. Like NCCL's sysfs walk, each level of
// the tree consumes two path elements (the port the device hangs from and the switch's upstream
// port); a lone root port left at the top merges into the CPU.
std::vector<std::string> pcie_switches_above(const PciPlacement& placement);

// PIX: one switch; PXB: several switches; PHB: through the host bridge; NODE: across host
// bridges of one NUMA node; SYS: across NUMA nodes.
LinkKind classify_pci_path(const PciPlacement& a, const PciPlacement& b);

}  // namespace nccltune
