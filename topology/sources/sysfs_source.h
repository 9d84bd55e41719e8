// sysfs adapter: PCIe link state, NUMA node, ACS control and IOMMU group of PCI devices,
// InfiniBand/RoCE ports (with a RoCE port's GID table) and network interfaces. Everything is read
// below one root (`/sys` live, a snapshot's `sysfs/` replayed), so both are the same code path.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "topology/node_topology.h"

namespace nccltune {

struct IbPort {
  int port = 1;
  std::optional<std::string> state;  // "ACTIVE", "DOWN", ...
  std::optional<double> rate_gbps;
  std::optional<std::string> link_layer;
  // Ethernet ports: the used entries of gids/ with their gid_attrs; null when there is no gids/.
  std::optional<std::vector<RoceGid>> gids;
};

struct RdmaDevice {
  std::string name;  // "mlx5_0"
  std::optional<std::string> pci;
  std::vector<IbPort> ports;
  std::vector<std::string> netdevs;
};

class SysfsSource {
 public:
  explicit SysfsSource(std::filesystem::path root) : root_(std::move(root)) {}
  const std::filesystem::path& root() const { return root_; }

  PcieLink pcie_link(const std::string& pci) const;
  std::optional<int> numa_node(const std::string& pci) const;
  // True when P2P request or completion redirect is on in the device's ACS control register.
  // nullopt when the config space cannot be read that far (not root) or has no ACS capability.
  std::optional<bool> acs_redirect(const std::string& pci) const;
  // The type of the device's IOMMU group (see IommuDomain); null when the root has no
  // kernel/iommu_groups/ at all (a snapshot taken without them) or the type cannot be read.
  IommuDomain iommu_domain(const std::string& pci) const;
  // The bridges above a device, nearest first, from the device's path under devices/.
  std::vector<std::string> parent_bridges(const std::string& pci) const;
  // Damaged content (a GID that is not one, an unknown GID type, an MTU that is not a number) is
  // read as unknown, and `notes`, when given, says where.
  std::vector<RdmaDevice> rdma_devices(std::vector<std::string>* notes = nullptr) const;
  std::vector<NetInterface> net_interfaces(std::vector<std::string>* notes = nullptr) const;

 private:
  std::filesystem::path pci_dir(const std::string& pci) const;
  std::filesystem::path root_;
};

// "32.0 GT/s PCIe" -> 5; "2.5 GT/s" -> 1; nullopt for "Unknown" and the like.
std::optional<int> pcie_gen_from_speed(std::string_view text);
// "400 Gb/sec (4X NDR)" -> 400.
std::optional<double> ib_rate_gbps(std::string_view text);
// "4: ACTIVE" -> "ACTIVE".
std::optional<std::string> ib_port_state(std::string_view text);

// A sysfs attribute is at most a page, PCI config space 4 KiB; a snapshot's copy that is larger,
// or a FIFO or device in its place, reads as absent.
inline constexpr std::size_t kMaxSysfsFileBytes = 64 << 10;

// The first line of a sysfs (or procfs) attribute, trailing blanks cut, invalid UTF-8 repaired;
// nullopt when it cannot be read (absent, a read error such as an unused GID entry's EINVAL, not a
// regular file, larger than an attribute can be).
std::optional<std::string> read_attribute_line(const std::filesystem::path& file);

// A Linux interface name as the kernel allows it: 1-15 bytes, printable ASCII without '/', ':' or
// blanks, not "." or "..".
bool is_interface_name(std::string_view name);

}  // namespace nccltune
