// NodeTopology: what one node's sources say about its GPUs, NICs and the links between them.
// A plain value type: adapters fill it, pure functions (affinity, checks, renderers) read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topology/fabric.h"
#include "topology/link_type.h"

namespace nccltune {

enum class FactSource { hwloc, sysfs, nvml, nvidia_smi, ibverbs };
std::string_view to_string(FactSource source);

// Which source gave each named field of a device ("name" -> nvml, "pcie" -> sysfs, ...).
using Provenance = std::map<std::string, FactSource>;

// PCIe link state read from sysfs; each field null when unknown.
struct PcieLink {
  std::optional<int> gen, width, max_gen, max_width;

  bool width_degraded() const { return width && max_width && *width < *max_width; }
  bool speed_degraded() const { return gen && max_gen && *gen < *max_gen; }
  bool known() const { return gen || width || max_gen || max_width; }
  friend bool operator==(const PcieLink&, const PcieLink&) = default;
};

// How the IOMMU treats a device's DMA, from its IOMMU group's `type` in sysfs: "identity"
// (passthrough), "DMA" or "DMA-FQ" (translated), ...; "none" when the device is in no IOMMU group
// (no IOMMU). Null when unknown: no sysfs, a snapshot taken without the groups, a kernel before 5.11
// (no `type` file).
using IommuDomain = std::optional<std::string>;

struct Gpu {
  int index = 0;
  std::optional<std::string> name;
  std::optional<std::string> pci;  // "0000:18:00.0"
  std::optional<int> numa;
  std::optional<std::string> cpu_affinity;  // cpulist, e.g. "0-51,104-155"
  std::optional<int> nvlinks;               // active NVLinks in total
  std::optional<int> sm;                    // compute capability, major*10+minor
  // An active NVLink-C2C link to its own CPU (Grace-Hopper/Blackwell superchips): true or
  // false when NVML says, null when it cannot (older driver, no NVML). NCCL then reaches the
  // NICs on that CPU through C2C (path P2C) rather than through PCIe.
  std::optional<bool> c2c;
  // Framebuffer and BAR1 totals in bytes. BAR1 is the window through which NICs and peers reach
  // GPU memory over PCIe (GPUDirect RDMA, P2P), so it bounds how much memory can be mapped for
  // them at once: 256 MiB on GPUs without resizable BAR. Null where the driver says N/A (Grace
  // superchips, whose memory is reached coherently) as well as where no source said.
  std::optional<std::uint64_t> memory_bytes, bar1_bytes;
  // Its registration with the NVLink fabric (NVML, else nvidia-smi -q); null where the GPU has
  // none (state not supported) or no source said.
  std::optional<GpuFabric> fabric;
  PcieLink pcie;
  IommuDomain iommu;
  Provenance sources;
};

// One used entry of a RoCE port's GID table (sysfs ports/<port>/gids/<index> and gid_attrs/).
struct RoceGid {
  int index = 0;
  std::string gid;                  // "0000:0000:0000:0000:0000:ffff:0a00:0005", lower case
  std::optional<std::string> type;  // "RoCE v2" or "IB/RoCE v1"; null when unreadable
  std::optional<std::string> ndev;  // the netdev the address belongs to, e.g. "ens1f0np0"
  friend bool operator==(const RoceGid&, const RoceGid&) = default;
};

struct Nic {
  int index = 0;
  std::optional<std::string> name;  // verbs device, e.g. "mlx5_0"
  std::optional<std::string> pci;
  std::optional<int> numa;
  std::optional<std::string> link_layer;  // "InfiniBand" or "Ethernet"
  std::optional<std::string> state;       // port state, "ACTIVE", "DOWN", ...
  std::optional<double> rate_gbps;
  std::optional<int> port;
  std::optional<std::string> netdev;
  // Ethernet (RoCE) ports only: the used GID table entries (null when the table was not read) and
  // the netdev's MTU, which caps RoCE's path MTU.
  std::optional<std::vector<RoceGid>> gids;
  std::optional<int> mtu;
  PcieLink pcie;
  IommuDomain iommu;
  Provenance sources;
};

// A PCI bridge on the path between a device and its host bridge.
struct PciBridge {
  std::string pci;
  PcieLink pcie;
  std::optional<bool> acs_redirect;  // P2P request/completion redirect enabled (needs root)
  std::vector<std::string> below;    // device ids ("GPU0", "NIC3") under this bridge
};

// One unordered pair of devices; `a` is the lower-ordered id (GPUs before NICs).
struct DeviceLink {
  std::string a, b;
  LinkType type;
  FactSource source = FactSource::hwloc;
};

// A network interface usable for NCCL's socket bootstrap.
struct NetInterface {
  std::string name;
  std::optional<std::string> pci;
  std::optional<std::string> operstate;
  std::optional<int> mtu;
  bool rdma = false;  // the netdev of an RDMA NIC (IPoIB or RoCE)
};

// What the kernel exposes about GPUDirect RDMA's prerequisites (sysfs and /proc); each null when
// not read (a source without sysfs, a snapshot taken before these were captured).
struct GpuDirectFacts {
  // The peer-memory module NCCL looks for ("nvidia_peermem", or the older "nv_peer_mem"); "" when
  // none is loaded.
  std::optional<std::string> peer_memory;
  std::optional<std::string> kernel_release;         // /proc/sys/kernel/osrelease, "5.15.0-105-generic"
  std::optional<bool> open_kernel_module;            // the NVIDIA driver is the open kernel module
  std::optional<std::string> nvidia_module_version;  // /sys/module/nvidia/version, "550.54.15"
  friend bool operator==(const GpuDirectFacts&, const GpuDirectFacts&) = default;
};

struct NodeTopology {
  std::string host;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<DeviceLink> links;
  std::vector<PciBridge> bridges;
  std::vector<NetInterface> interfaces;
  std::optional<bool> nvswitch;
  std::optional<std::string> driver_version;
  GpuDirectFacts gpudirect;
  std::vector<FactSource> sources_used;
  std::vector<std::string> notes;  // degraded sources and other things a reader should know

  // Constant time through an index that set_link keeps; links pushed directly (tests) are found
  // by a scan. A 256-device matrix has 32,640 links, and the readers and renderers visit each pair.
  const DeviceLink* find_link(std::string_view a, std::string_view b) const;
  void set_link(const std::string& a, const std::string& b, LinkType type, FactSource source);

 private:
  std::unordered_map<std::string, std::size_t> link_at_;  // pair key -> index in links
};

// The most GPUs, and the most NICs, one node's sources may name; readers refuse more with a clear
// error. The largest nodes have 16 GPUs and 20 NIC ports: 256 keeps every real machine and the
// emulated ones, and keeps a damaged or hostile input (a 10,000-row matrix) from costing minutes.
inline constexpr std::size_t kMaxDevicesPerKind = 256;

// The most framebuffer or BAR1 one GPU may report: 1 PiB, a thousand times today's largest, so a
// damaged size is refused before it overflows a count of bytes.
inline constexpr std::uint64_t kMaxGpuMemoryBytes = std::uint64_t{1} << 50;

// Whether the GPU reaches this NIC through its NVLink-C2C link to its own CPU rather than over
// PCIe: the GPU has an active C2C link and the NIC hangs off that CPU (the GPU's NUMA node; both
// must be known). NCCL calls this path P2C (src/graph/paths.cc, ncclTopoComputePaths: a GPU-CPU
// path of type C2C merged with a CPU-NIC path of type PHB, mergePathType) and, since 2.27, keeps
// GPUDirect RDMA on for it (ncclTopoCheckGdr, NCCL_NET_GDR_C2C=1). A NIC on another socket
// stays SYS.
bool reaches_nic_through_c2c(const Gpu& gpu, const Nic& nic);

std::string gpu_id(int index);  // "GPU0"
std::string nic_id(int index);  // "NIC0"

// Orders names with embedded numbers as people do: mlx5_2 before mlx5_10.
bool natural_less(std::string_view a, std::string_view b);

// Normalizes a PCI address to "dddd:bb:dd.f" (lower case). Accepts "00000000:18:00.0" (NVML),
// "0000:18:00.0" and "18:00.0". Returns nullopt when it is not one.
std::optional<std::string> normalize_pci_address(std::string_view text);

}  // namespace nccltune
