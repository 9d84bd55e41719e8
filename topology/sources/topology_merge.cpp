// merge_topology: what each source said, merged into one NodeTopology that records which source
// gave each fact. Pure: the drivers that read the live machine or a snapshot are topology_reader.cpp.
#include "topology/sources/topology_reader.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "topology/roce.h"

namespace nccltune {

namespace {

void add_source(NodeTopology& topology, FactSource source) {
  if (std::find(topology.sources_used.begin(), topology.sources_used.end(), source) ==
      topology.sources_used.end())
    topology.sources_used.push_back(source);
}

template <class T, class Device>
void set_fact(Device& device, std::optional<T>& field, std::optional<T> value, const char* name,
              FactSource source) {
  if (!value) return;
  field = std::move(value);
  device.sources[name] = source;
}

const NvmlGpu* nvml_gpu_at(const NvmlFacts& nvml, const std::string& pci) {
  for (const auto& gpu : nvml.gpus)
    if (gpu.pci == pci) return &gpu;
  return nullptr;
}

void add_gpus(NodeTopology& topology, const TopologyInputs& in) {
  if (in.hwloc) {
    for (const auto& dev : in.hwloc->gpus) {
      Gpu gpu;
      gpu.index = static_cast<int>(topology.gpus.size());
      set_fact(gpu, gpu.pci, std::optional(dev.pci), "pci", FactSource::hwloc);
      set_fact(gpu, gpu.numa, dev.numa, "numa", FactSource::hwloc);
      set_fact(gpu, gpu.cpu_affinity, dev.cpu_affinity, "cpu_affinity", FactSource::hwloc);
      topology.gpus.push_back(std::move(gpu));
    }
  } else if (in.nvml) {
    for (const auto& dev : in.nvml->gpus) {
      Gpu gpu;
      gpu.index = static_cast<int>(topology.gpus.size());
      set_fact(gpu, gpu.pci, std::optional(dev.pci), "pci", FactSource::nvml);
      topology.gpus.push_back(std::move(gpu));
    }
  } else if (in.nvidia_smi) {
    topology.gpus = in.nvidia_smi->gpus;
    // The matrix names no PCI addresses. nvidia-smi numbers GPUs alike in `topo -m` and `-q`, so
    // when both list as many, GPU i of one is GPU i of the other.
    if (in.nvidia_smi_query && in.nvidia_smi_query->gpus.size() == topology.gpus.size()) {
      for (auto& gpu : topology.gpus) {
        const auto& dev = in.nvidia_smi_query->gpus[static_cast<std::size_t>(gpu.index)];
        set_fact(gpu, gpu.pci, std::optional(dev.pci), "pci", FactSource::nvidia_smi);
      }
    }
  } else if (in.nvidia_smi_query) {
    for (const auto& dev : in.nvidia_smi_query->gpus) {
      Gpu gpu;
      gpu.index = dev.index;
      set_fact(gpu, gpu.pci, std::optional(dev.pci), "pci", FactSource::nvidia_smi);
      topology.gpus.push_back(std::move(gpu));
    }
  }
  if (in.nvml) {
    for (auto& gpu : topology.gpus) {
      const NvmlGpu* dev = gpu.pci ? nvml_gpu_at(*in.nvml, *gpu.pci) : nullptr;
      if (!dev) continue;
      set_fact(gpu, gpu.name, std::optional(dev->name), "name", FactSource::nvml);
      set_fact(gpu, gpu.sm, dev->sm, "sm", FactSource::nvml);
      set_fact(gpu, gpu.cpu_affinity, dev->cpu_affinity, "cpu_affinity", FactSource::nvml);
      set_fact(gpu, gpu.nvlinks, std::optional(dev->nvlinks_total()), "nvlinks", FactSource::nvml);
      if (dev->c2c_links) set_fact(gpu, gpu.c2c, std::optional(*dev->c2c_links > 0), "c2c", FactSource::nvml);
      set_fact(gpu, gpu.memory_bytes, dev->memory_bytes, "memory_bytes", FactSource::nvml);
      set_fact(gpu, gpu.bar1_bytes, dev->bar1_bytes, "bar1_bytes", FactSource::nvml);
      if (dev->fabric && dev->fabric->state != FabricState::not_supported)
        set_fact(gpu, gpu.fabric, dev->fabric, "fabric", FactSource::nvml);
    }
  } else if (in.nvidia_smi && in.nvidia_smi->gpus.size() == topology.gpus.size() && in.hwloc) {
    for (size_t i = 0; i < topology.gpus.size(); ++i) {
      const Gpu& smi = in.nvidia_smi->gpus[i];
      Gpu& gpu = topology.gpus[i];
      if (!gpu.cpu_affinity)
        set_fact(gpu, gpu.cpu_affinity, smi.cpu_affinity, "cpu_affinity", FactSource::nvidia_smi);
      if (!gpu.numa) set_fact(gpu, gpu.numa, smi.numa, "numa", FactSource::nvidia_smi);
    }
  }
}

const RdmaDevice* rdma_named(const std::optional<std::vector<RdmaDevice>>& devices, const std::string& name) {
  if (!devices) return nullptr;
  for (const auto& device : *devices)
    if (device.name == name) return &device;
  return nullptr;
}

void apply_port(Nic& nic, const RdmaDevice& device, FactSource source) {
  if (!nic.pci && device.pci) set_fact(nic, nic.pci, device.pci, "pci", source);
  if (!nic.netdev && !device.netdevs.empty())
    set_fact(nic, nic.netdev, std::optional(device.netdevs.front()), "netdev", source);
  if (device.ports.empty()) return;
  const IbPort& port = device.ports.front();
  set_fact(nic, nic.port, std::optional(port.port), "port", source);
  set_fact(nic, nic.state, port.state, "state", source);
  set_fact(nic, nic.rate_gbps, port.rate_gbps, "rate_gbps", source);
  set_fact(nic, nic.link_layer, port.link_layer, "link_layer", source);
  if (port.gids) nic.gids = port.gids;  // sysfs only: verbs is not asked for the GID table
}

void add_nics(NodeTopology& topology, const TopologyInputs& in) {
  std::optional<std::vector<RdmaDevice>> sysfs_rdma;
  if (in.sysfs) sysfs_rdma = in.sysfs->rdma_devices(&topology.notes);
  if (in.hwloc) {
    for (const auto& dev : in.hwloc->nics) {
      Nic nic;
      nic.index = static_cast<int>(topology.nics.size());
      set_fact(nic, nic.name, std::optional(dev.openfabrics.front()), "name", FactSource::hwloc);
      set_fact(nic, nic.pci, std::optional(dev.pci), "pci", FactSource::hwloc);
      set_fact(nic, nic.numa, dev.numa, "numa", FactSource::hwloc);
      if (!dev.network.empty())
        set_fact(nic, nic.netdev, std::optional(dev.network.front()), "netdev", FactSource::hwloc);
      topology.nics.push_back(std::move(nic));
    }
  } else {
    const auto& listed = in.ibverbs && !in.ibverbs->empty() ? in.ibverbs : sysfs_rdma;
    if (listed && !listed->empty()) {
      for (const auto& dev : *listed) {
        Nic nic;
        nic.index = static_cast<int>(topology.nics.size());
        set_fact(nic, nic.name, std::optional(dev.name), "name",
                 &listed == &in.ibverbs ? FactSource::ibverbs : FactSource::sysfs);
        topology.nics.push_back(std::move(nic));
      }
    } else if (in.nvidia_smi) {
      topology.nics = in.nvidia_smi->nics;
    }
  }
  for (auto& nic : topology.nics) {
    if (!nic.name) continue;
    if (const RdmaDevice* dev = rdma_named(sysfs_rdma, *nic.name)) apply_port(nic, *dev, FactSource::sysfs);
    if (const RdmaDevice* dev = rdma_named(in.ibverbs, *nic.name)) apply_port(nic, *dev, FactSource::ibverbs);
  }
}

void add_pcie_state(NodeTopology& topology, const TopologyInputs& in) {
  if (!in.sysfs) return;
  auto read_device = [&](auto& device) {
    if (!device.pci) return;
    device.pcie = in.sysfs->pcie_link(*device.pci);
    if (device.pcie.known()) device.sources["pcie"] = FactSource::sysfs;
    device.iommu = in.sysfs->iommu_domain(*device.pci);
    if (!device.numa)
      set_fact(device, device.numa, in.sysfs->numa_node(*device.pci), "numa", FactSource::sysfs);
  };
  for (auto& gpu : topology.gpus) read_device(gpu);
  for (auto& nic : topology.nics) read_device(nic);

  // The bridges above every GPU and NIC, each once, with the devices under it.
  std::map<std::string, size_t> bridge_at;
  auto add_bridges = [&](const std::string& id, const std::vector<std::string>& bridges) {
    for (const auto& pci : bridges) {
      auto [it, inserted] = bridge_at.try_emplace(pci, topology.bridges.size());
      if (inserted)
        topology.bridges.push_back({pci, in.sysfs->pcie_link(pci), in.sysfs->acs_redirect(pci), {}});
      topology.bridges[it->second].below.push_back(id);
    }
  };
  auto bridges_of = [&](const std::optional<std::string>& pci, const std::vector<PciDeviceInfo>* devices) {
    if (devices) {
      for (const auto& dev : *devices)
        if (pci && dev.pci == *pci) return dev.placement.bridges;
    }
    return pci ? in.sysfs->parent_bridges(*pci) : std::vector<std::string>{};
  };
  for (const auto& gpu : topology.gpus)
    add_bridges(gpu_id(gpu.index), bridges_of(gpu.pci, in.hwloc ? &in.hwloc->gpus : nullptr));
  for (const auto& nic : topology.nics)
    add_bridges(nic_id(nic.index), bridges_of(nic.pci, in.hwloc ? &in.hwloc->nics : nullptr));
}

// What `nvidia-smi -q` says fills in, GPU by GPU matched by PCI address, what the other sources
// left unknown: NVML, the same driver asked directly, wins for names, memory and the fabric, and
// sysfs, the link registers themselves, for the PCIe link. A GPU only it names is left out, with a note.
void add_query_facts(NodeTopology& topology, const TopologyInputs& in) {
  if (!in.nvidia_smi_query) return;
  std::string unmatched;
  for (const auto& dev : in.nvidia_smi_query->gpus) {
    auto gpu = std::find_if(topology.gpus.begin(), topology.gpus.end(),
                            [&](const Gpu& g) { return g.pci == dev.pci; });
    if (gpu == topology.gpus.end()) {
      unmatched += (unmatched.empty() ? "" : ", ") + dev.pci;
      continue;
    }
    if (!gpu->name) set_fact(*gpu, gpu->name, dev.name, "name", FactSource::nvidia_smi);
    if (!gpu->memory_bytes)
      set_fact(*gpu, gpu->memory_bytes, dev.memory_bytes, "memory_bytes", FactSource::nvidia_smi);
    if (!gpu->bar1_bytes)
      set_fact(*gpu, gpu->bar1_bytes, dev.bar1_bytes, "bar1_bytes", FactSource::nvidia_smi);
    if (!gpu->fabric) set_fact(*gpu, gpu->fabric, dev.fabric, "fabric", FactSource::nvidia_smi);
    if (!gpu->pcie.known() && dev.pcie.known()) {
      gpu->pcie = dev.pcie;
      gpu->sources["pcie"] = FactSource::nvidia_smi;
    }
  }
  if (!unmatched.empty())
    topology.notes.push_back("nvidia-smi -q: GPUs the other sources do not list (" + unmatched +
                             "); what it says of them is left out");
}

const PciPlacement* placement_of(const std::vector<PciDeviceInfo>& devices,
                                 const std::optional<std::string>& pci) {
  if (!pci) return nullptr;
  for (const auto& dev : devices)
    if (dev.pci == *pci) return &dev.placement;
  return nullptr;
}

void add_links(NodeTopology& topology, const TopologyInputs& in) {
  struct Endpoint {
    std::string id;
    const PciPlacement* placement;
  };
  std::vector<Endpoint> endpoints;
  for (const auto& gpu : topology.gpus)
    endpoints.push_back({gpu_id(gpu.index), in.hwloc ? placement_of(in.hwloc->gpus, gpu.pci) : nullptr});
  for (const auto& nic : topology.nics)
    endpoints.push_back({nic_id(nic.index), in.hwloc ? placement_of(in.hwloc->nics, nic.pci) : nullptr});

  for (size_t i = 0; i < endpoints.size(); ++i) {
    for (size_t j = i + 1; j < endpoints.size(); ++j) {
      const auto& a = endpoints[i];
      const auto& b = endpoints[j];
      if (a.placement && b.placement) {
        topology.set_link(a.id, b.id, {classify_pci_path(*a.placement, *b.placement), 0}, FactSource::hwloc);
      } else if (in.nvidia_smi && !in.hwloc) {
        if (const DeviceLink* link = in.nvidia_smi->find_link(a.id, b.id))
          topology.set_link(a.id, b.id, link->type, FactSource::nvidia_smi);
      }
    }
  }
  // NVLink between GPUs: NVML when present, else nvidia-smi's NV<n> cells.
  std::vector<const NvmlGpu*> nvml_of;  // by position in topology.gpus, looked up once
  for (const auto& gpu : topology.gpus)
    nvml_of.push_back(in.nvml && gpu.pci ? nvml_gpu_at(*in.nvml, *gpu.pci) : nullptr);
  for (size_t i = 0; i < topology.gpus.size(); ++i) {
    for (size_t j = i + 1; j < topology.gpus.size(); ++j) {
      const Gpu& a = topology.gpus[i];
      const Gpu& b = topology.gpus[j];
      const NvmlGpu* na = nvml_of[i];
      const NvmlGpu* nb = nvml_of[j];
      if (na && nb) {
        if (int links = nvlinks_between(*na, *nb); links > 0)
          topology.set_link(gpu_id(a.index), gpu_id(b.index), {LinkKind::nvlink, links}, FactSource::nvml);
      } else if (in.nvidia_smi && !in.nvml) {
        const DeviceLink* link = in.nvidia_smi->find_link(gpu_id(a.index), gpu_id(b.index));
        if (link && link->type.kind == LinkKind::nvlink)
          topology.set_link(gpu_id(a.index), gpu_id(b.index), link->type, FactSource::nvidia_smi);
      }
    }
  }
}

void add_interfaces(NodeTopology& topology, const TopologyInputs& in) {
  if (!in.sysfs) return;
  topology.interfaces = in.sysfs->net_interfaces(&topology.notes);
  for (auto& net : topology.interfaces) {
    for (auto& nic : topology.nics) {
      if (nic.netdev == net.name || (nic.pci && net.pci == nic.pci)) net.rdma = true;
      // RoCE's path MTU follows its netdev's MTU; an IPoIB netdev's MTU says nothing of the IB port.
      if (nic.netdev == net.name && is_roce(nic)) nic.mtu = net.mtu;
    }
  }
}

std::optional<bool> nvswitch_present(const TopologyInputs& in) {
  if (in.hwloc && !in.hwloc->nvswitches.empty()) return true;
  if (in.nvml) {
    for (const auto& gpu : in.nvml->gpus)
      if (gpu.nvlinks_to_switches() > 0) return true;
    return false;
  }
  return std::nullopt;
}

}  // namespace

NodeTopology merge_topology(const TopologyInputs& in) {
  NodeTopology topology;
  topology.host = in.host;
  topology.notes = in.notes;
  if (in.hwloc) add_source(topology, FactSource::hwloc);
  if (in.nvml) add_source(topology, FactSource::nvml);
  if (in.nvidia_smi || in.nvidia_smi_query) add_source(topology, FactSource::nvidia_smi);
  if (in.sysfs) add_source(topology, FactSource::sysfs);
  if (in.ibverbs && !in.ibverbs->empty()) add_source(topology, FactSource::ibverbs);
  add_gpus(topology, in);
  add_nics(topology, in);
  add_pcie_state(topology, in);
  add_query_facts(topology, in);
  add_links(topology, in);
  add_interfaces(topology, in);
  topology.nvswitch = nvswitch_present(in);
  if (in.nvml) topology.driver_version = in.nvml->driver_version;
  if (!topology.driver_version && in.nvidia_smi_query)
    topology.driver_version = in.nvidia_smi_query->driver_version;
  topology.gpudirect = in.gpudirect;
  return topology;
}

}  // namespace nccltune
