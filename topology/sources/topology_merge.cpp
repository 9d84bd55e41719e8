#include "topology/sources/topology_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <map>

#include "base/atomic_file.h"
#include "base/child_process.h"
#include "base/strict_yaml.h"
#include "topology/nvidia_smi_topo.h"
#include "topology/roce.h"
#include "topology/sources/gpudirect_source.h"
#include "topology/sources/ibverbs_source.h"
#include "topology/sources/nvml_source.h"

extern char** environ;

namespace nccltune {
namespace fs = std::filesystem;

Result<TopologySource> parse_topology_source(std::string_view from) {
  TopologySource source;
  if (from.empty()) return source;
  auto with_prefix = [&](std::string_view prefix, TopologySource::Kind kind) -> bool {
    if (from.substr(0, prefix.size()) != prefix) return false;
    source.kind = kind;
    source.path = std::string(from.substr(prefix.size()));
    return true;
  };
  if (!with_prefix("nvidia-smi:", TopologySource::Kind::nvidia_smi) &&
      !with_prefix("nvidia-smi-q:", TopologySource::Kind::nvidia_smi_query) &&
      !with_prefix("hwloc:", TopologySource::Kind::hwloc)) {
    source.kind = TopologySource::Kind::snapshot;
    source.path = std::string(from);
  }
  std::error_code ec;
  if (source.path.empty()) return Error{"--from " + std::string(from) + ": no file named"};
  if (source.kind == TopologySource::Kind::snapshot && !fs::is_directory(source.path, ec))
    return Error{
        "--from " + source.path.string() +
        ": not a snapshot directory (use nvidia-smi:FILE, nvidia-smi-q:FILE or hwloc:FILE for single "
        "files)"};
  return source;  // a single file is checked when read: regular, and within its size cap
}

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
// left unknown: NVML, the same driver asked directly, wins for names and memory, and sysfs, the
// link registers themselves, for the PCIe link. A GPU only it names is left out, with a note.
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

namespace {

std::string local_hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "localhost";
  return name.data();
}

// How long nvidia-smi may take: it hangs exactly when a GPU falls off the bus. Its output is
// kept as a snapshot file, so it may be as large as one.
constexpr std::chrono::seconds kNvidiaSmiTimeout{10};
constexpr std::size_t kNvidiaSmiMaxOutput = kMaxSnapshotBytes;

}  // namespace

std::optional<std::string> run_nvidia_smi(const std::string& program, const std::vector<std::string>& args,
                                          std::vector<std::string>& notes) {
  CommandOptions options;
  options.timeout = kNvidiaSmiTimeout;
  options.max_output = kNvidiaSmiMaxOutput;
  options.search_path = true;
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  const Result<CommandOutput> run = run_command(argv, environ, options);
  if (!run) return std::nullopt;  // not installed: NVML's note already says what is unknown
  if (run->timed_out) {
    const std::string command = fmt::format("nvidia-smi {}", fmt::join(args, " "));
    if (run->out.size() > kNvidiaSmiMaxOutput)
      notes.push_back(
          fmt::format("{}: printed more than {} MiB, stopped", command, kNvidiaSmiMaxOutput >> 20));
    else
      notes.push_back(fmt::format("{}: no answer in {} s, killed", command, kNvidiaSmiTimeout.count()));
    return std::nullopt;
  }
  if (!run->exit.exited_cleanly() || run->out.empty()) return std::nullopt;
  return run->out;
}

namespace {

Result<NodeTopology> read_live(const ReadOptions& options) {
  TopologyInputs in;
  in.host = local_hostname();
  if (auto hwloc = read_hwloc_live())
    in.hwloc = std::move(hwloc.value());
  else
    in.notes.push_back("hwloc: " + hwloc.error() + "; PCIe link types unknown");
  if (auto nvml = read_nvml_live(options.nvml_library)) {
    in.nvml = std::move(nvml.value());
  } else {
    in.notes.push_back("NVML: " + nvml.error() + "; GPU names and NVLinks unknown");
    if (auto text = run_nvidia_smi(options.nvidia_smi, {"topo", "-m"}, in.notes)) {
      if (auto smi = parse_nvidia_smi_topo(*text, "nvidia-smi topo -m"))
        in.nvidia_smi = std::move(smi.value());
      else
        in.notes.push_back(smi.error());
    }
  }
  SysfsSource sysfs(options.sys_root);
  in.sysfs = &sysfs;
  in.ibverbs = read_ibverbs_devices();
  in.gpudirect = read_gpudirect_facts(options.sys_root, options.proc_root);
  return merge_topology(in);
}

Result<NvidiaSmiQuery> read_nvidia_smi_query(const fs::path& file) {
  auto text = read_text_file(file, kMaxSnapshotBytes);
  if (!text) return Error{text.error()};
  return parse_nvidia_smi_query(*text, file.string());
}

Result<NodeTopology> read_snapshot(const fs::path& dir) {
  TopologyInputs in;
  in.host = dir.filename().string();
  const fs::path meta = dir / "meta.yaml";
  std::error_code ec;
  if (fs::exists(meta, ec)) {
    const Status read = read_strict_yaml(meta, [&](const YAML::Node& root) {
      yaml_check_keys(root, "", {"schema", "host", "date", "tool", "hwloc", "nvml", "note"});
      if (const YAML::Node host = root["host"]) in.host = yaml_text(host, "host");
    });
    if (!read) return Error{read.error()};
  }
  if (fs::exists(dir / "hwloc.xml", ec)) {
    auto hwloc = read_hwloc_xml(dir / "hwloc.xml");
    if (!hwloc) return Error{hwloc.error()};
    in.hwloc = std::move(hwloc.value());
  }
  if (fs::exists(dir / "nvml.yaml", ec)) {
    auto nvml = read_nvml_yaml(dir / "nvml.yaml");
    if (!nvml) return Error{nvml.error()};
    in.nvml = std::move(nvml.value());
  }
  if (fs::exists(dir / "nvidia-smi-topo.txt", ec)) {
    auto text = read_text_file(dir / "nvidia-smi-topo.txt", kMaxSnapshotBytes);
    if (!text) return Error{text.error()};
    auto smi = parse_nvidia_smi_topo(*text, (dir / "nvidia-smi-topo.txt").string());
    if (!smi) return Error{smi.error()};
    in.nvidia_smi = std::move(smi.value());
  }
  if (fs::exists(dir / "nvidia-smi-q.txt", ec)) {
    auto query = read_nvidia_smi_query(dir / "nvidia-smi-q.txt");
    if (!query) return Error{query.error()};
    in.nvidia_smi_query = std::move(query.value());
  }
  if (!in.hwloc && !in.nvml && !in.nvidia_smi && !in.nvidia_smi_query)
    return Error{dir.string() +
                 ": not a node snapshot (no hwloc.xml, nvml.yaml, nvidia-smi-topo.txt or nvidia-smi-q.txt)"};
  SysfsSource sysfs(dir / "sysfs");
  if (fs::is_directory(sysfs.root(), ec)) {
    in.sysfs = &sysfs;
    in.gpudirect = read_gpudirect_facts(sysfs.root(), dir / "proc");
  }
  return merge_topology(in);
}

}  // namespace

Result<NodeTopology> read_node_topology(const TopologySource& source, const ReadOptions& options) {
  switch (source.kind) {
    case TopologySource::Kind::live: return read_live(options);
    case TopologySource::Kind::snapshot: return read_snapshot(source.path);
    case TopologySource::Kind::nvidia_smi: {
      auto text = read_text_file(source.path, kMaxSnapshotBytes);
      if (!text) return Error{text.error()};
      auto smi = parse_nvidia_smi_topo(*text, source.path.string());
      if (!smi) return Error{smi.error()};
      TopologyInputs in;
      in.host = source.path.stem().string();
      in.nvidia_smi = std::move(smi.value());
      return merge_topology(in);
    }
    case TopologySource::Kind::nvidia_smi_query: {
      auto query = read_nvidia_smi_query(source.path);
      if (!query) return Error{query.error()};
      TopologyInputs in;
      in.host = source.path.stem().string();
      in.nvidia_smi_query = std::move(query.value());
      return merge_topology(in);
    }
    case TopologySource::Kind::hwloc: {
      auto hwloc = read_hwloc_xml(source.path);
      if (!hwloc) return Error{hwloc.error()};
      TopologyInputs in;
      in.host = source.path.stem().string();
      in.hwloc = std::move(hwloc.value());
      return merge_topology(in);
    }
  }
  return Error{"unknown topology source"};
}

}  // namespace nccltune
