// hwloc adapter: the PCI tree (host bridges, bridges, NUMA locality) and the GPUs, RDMA NICs,
// NVSwitches and network interfaces in it, from the live machine or an hwloc XML export.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "topology/pci_path.h"

namespace nccltune {

struct PciDeviceInfo {
  std::string pci;  // "0000:18:00.0"
  unsigned vendor_id = 0, device_id = 0, class_id = 0;
  PciPlacement placement;
  std::optional<int> numa;                  // when the device's locality is one NUMA node
  std::optional<std::string> cpu_affinity;  // cpulist of that locality
  std::vector<std::string> openfabrics;     // OS devices: verbs names ("mlx5_0")
  std::vector<std::string> network;         // OS devices: netdevs ("ibp24s0", "eno1")
  std::vector<std::string> gpu_osdevs;      // OS devices: "cuda0", "nvml0", "card1"
};

struct PciInventory {
  std::vector<PciDeviceInfo> gpus;        // NVIDIA 3D/VGA controllers, by PCI address
  std::vector<PciDeviceInfo> nics;        // devices with an OpenFabrics (verbs) OS device
  std::vector<PciDeviceInfo> nvswitches;  // NVIDIA bridge-class devices ("NVSwitch")
  std::vector<PciDeviceInfo> interfaces;  // other PCI devices with a network OS device
  std::string hwloc_version;
};

// Reads the live machine through hwloc's Linux backend (it honours HWLOC_FSROOT).
Result<PciInventory> read_hwloc_live();
// Reads an hwloc XML export (`lstopo foo.xml`, or a snapshot's hwloc.xml): a regular file of at
// most 16 MiB, loaded by the nccltune-hwloc-xml helper in a child process with limits, because a
// damaged XML can crash libhwloc itself. A crash, a hang (killed after 30 s) or an error becomes
// one message naming the file. Implemented in hwloc_xml_child.cpp.
Result<PciInventory> read_hwloc_xml(const std::filesystem::path& xml);
// What the helper runs: hwloc's XML import of `xml` in this process.
Result<PciInventory> read_hwloc_xml_in_process(const std::string& xml);
// Exports the live machine as XML, with PCI and OS devices, for a snapshot.
Status export_hwloc_xml(const std::filesystem::path& xml);

}  // namespace nccltune
