#include "topology/sources/snapshot.h"

#include <unistd.h>

#include <array>
#include <fstream>
#include <set>

#include "base/atomic_file.h"
#include "base/utc_time.h"
#include "topology/roce.h"
#include "topology/sources/gpudirect_source.h"
#include "topology/sources/hwloc_source.h"
#include "topology/sources/nvml_source.h"
#include "topology/sources/sysfs_source.h"
#include "topology/sources/topology_reader.h"

namespace nccltune {
namespace fs = std::filesystem;

namespace {

constexpr std::array kPciFiles{"current_link_speed",
                               "current_link_width",
                               "max_link_speed",
                               "max_link_width",
                               "numa_node",
                               "class",
                               "vendor",
                               "device"};

// Copies one file from the live sysfs (or procfs) into the snapshot. Absent files are skipped, and
// so are those whose read fails (an unused GID entry's attributes fail with EINVAL): the replay
// reads both as absent.
void copy_sysfs_file(const fs::path& from, const fs::path& to) {
  const Result<std::string> content = read_text_file(from, kMaxSysfsFileBytes);
  if (!content) return;
  fs::create_directories(to.parent_path());
  std::ofstream(to, std::ios::binary) << *content;
}

// The used entries of a RoCE port's GID table with their type and netdev; unused (all-zero)
// entries are left out, which the reader takes as unused.
void copy_gid_table(const fs::path& from_port, const fs::path& to_port) {
  for (int index = 0; index < kMaxGidsPerPort; ++index) {
    const std::string name = std::to_string(index);
    const auto gid = read_attribute_line(from_port / "gids" / name);
    if (!gid || is_empty_gid(*gid)) continue;
    for (const char* file : {"gids/", "gid_attrs/types/", "gid_attrs/ndevs/"})
      copy_sysfs_file(from_port / (file + name), to_port / (file + name));
  }
}

// A device's IOMMU group as a link to kernel/iommu_groups/<N>, with that group's type. The
// directory kernel/iommu_groups is made even when empty: the replay then knows there is no IOMMU.
void copy_iommu_group(const fs::path& sys, const fs::path& out, const std::string& pci) {
  std::error_code ec;
  if (!fs::is_directory(sys / "kernel/iommu_groups", ec)) return;
  fs::create_directories(out / "kernel/iommu_groups");
  const fs::path target = fs::read_symlink(sys / "bus/pci/devices" / pci / "iommu_group", ec);
  if (ec) return;
  const std::string group = target.filename().string();
  copy_sysfs_file(sys / "kernel/iommu_groups" / group / "type", out / "kernel/iommu_groups" / group / "type");
  fs::create_directories(out / "bus/pci/devices" / pci);
  fs::create_symlink("../../../../kernel/iommu_groups/" + group,
                     out / "bus/pci/devices" / pci / "iommu_group", ec);
}

// What GPUDirect RDMA's prerequisites are read from. module/ is made whenever the live one exists,
// so that a replay knows no peer-memory module was loaded rather than that none was captured.
void capture_gpudirect(const fs::path& sys, const fs::path& out_sys, const fs::path& proc,
                       const fs::path& out_proc) {
  std::error_code ec;
  if (fs::is_directory(sys / "module", ec)) fs::create_directories(out_sys / "module");
  for (const char* file : kGpuDirectSysFiles) copy_sysfs_file(sys / file, out_sys / file);
  for (const char* file : kGpuDirectProcFiles) copy_sysfs_file(proc / file, out_proc / file);
}

void link_to_pci(const fs::path& link, const std::string& pci, int depth) {
  std::string target;
  for (int i = 0; i < depth; ++i) target += "../";
  fs::create_directories(link.parent_path());
  std::error_code ec;
  fs::create_symlink(target + "bus/pci/devices/" + pci, link, ec);
}

void capture_sysfs(const fs::path& sys, const fs::path& out, const PciInventory& inventory) {
  std::set<std::string> devices, bridges;
  for (const auto* list : {&inventory.gpus, &inventory.nics, &inventory.nvswitches, &inventory.interfaces}) {
    for (const auto& dev : *list) {
      devices.insert(dev.pci);
      bridges.insert(dev.placement.bridges.begin(), dev.placement.bridges.end());
    }
  }
  for (const auto& pci : devices) {
    for (const char* file : kPciFiles)
      copy_sysfs_file(sys / "bus/pci/devices" / pci / file, out / "bus/pci/devices" / pci / file);
    copy_iommu_group(sys, out, pci);
  }
  for (const auto& pci : bridges) {
    for (const char* file : kPciFiles)
      copy_sysfs_file(sys / "bus/pci/devices" / pci / file, out / "bus/pci/devices" / pci / file);
    copy_sysfs_file(sys / "bus/pci/devices" / pci / "config", out / "bus/pci/devices" / pci / "config");
  }
  SysfsSource live(sys);
  for (const auto& rdma : live.rdma_devices()) {
    const fs::path base = out / "class/infiniband" / rdma.name;
    for (const auto& port : rdma.ports) {
      const fs::path port_dir = sys / "class/infiniband" / rdma.name / "ports" / std::to_string(port.port);
      for (const char* file : {"state", "rate", "link_layer"})
        copy_sysfs_file(port_dir / file, base / "ports" / std::to_string(port.port) / file);
      if (port.gids) copy_gid_table(port_dir, base / "ports" / std::to_string(port.port));
    }
    if (!rdma.pci) continue;
    link_to_pci(base / "device", *rdma.pci, 3);
    for (const auto& netdev : rdma.netdevs)
      copy_sysfs_file(sys / "class/net" / netdev / "operstate",
                      out / "bus/pci/devices" / *rdma.pci / "net" / netdev / "operstate");
  }
  for (const auto& net : live.net_interfaces()) {
    for (const char* file : {"operstate", "type", "mtu"})
      copy_sysfs_file(sys / "class/net" / net.name / file, out / "class/net" / net.name / file);
    if (net.pci) link_to_pci(out / "class/net" / net.name / "device", *net.pci, 3);
  }
}

Status fill_snapshot(const fs::path& dir, const ReadOptions& options, const std::string& tool_version) {
  auto exported = export_hwloc_xml(dir / "hwloc.xml");
  if (!exported) return Error{exported.error()};
  auto inventory = read_hwloc_xml(dir / "hwloc.xml");
  if (!inventory) return Error{inventory.error()};
  std::string nvml_status = "absent";
  if (auto nvml = read_nvml_live(options.nvml_library)) {
    auto written = write_file_atomically(dir / "nvml.yaml", nvml_yaml(*nvml));
    if (!written) return Error{written.error()};
    nvml_status = "captured";
  } else {
    nvml_status = nvml.error();
  }
  std::vector<std::string> smi_notes;  // a missing or hung nvidia-smi only leaves its file out
  if (const auto smi = run_nvidia_smi(options.nvidia_smi, {"topo", "-m"}, smi_notes)) {
    auto written = write_file_atomically(dir / "nvidia-smi-topo.txt", *smi);
    if (!written) return Error{written.error()};
  }
  // Kept as printed, read only when the snapshot is: a capture keeps what a damaged driver says.
  if (const auto query = run_nvidia_smi(options.nvidia_smi, {"-q"}, smi_notes)) {
    auto written = write_file_atomically(dir / "nvidia-smi-q.txt", *query);
    if (!written) return Error{written.error()};
  }
  capture_sysfs(options.sys_root, dir / "sysfs", *inventory);
  capture_gpudirect(options.sys_root, dir / "sysfs", options.proc_root, dir / "proc");

  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  std::string meta = "schema: nccltune/snapshot/v1\n";
  meta += "host: \"" + std::string(host.data()) + "\"\n";
  meta += "date: \"" + rfc3339_utc() + "\"\n";
  meta += "tool: \"" + tool_version + "\"\n";
  meta += "hwloc: \"" + inventory->hwloc_version + "\"\n";
  std::string escaped;
  for (char c : nvml_status) escaped += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  meta += "nvml: \"" + escaped + "\"\n";
  return write_file_atomically(dir / "meta.yaml", meta);
}

}  // namespace

Status capture_snapshot(const fs::path& dir, const ReadOptions& options, const std::string& tool_version) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    return Error{dir.string() + ": already exists and is not empty; choose a new directory"};
  const fs::path parent = fs::absolute(dir).parent_path();
  if (!fs::is_directory(parent, ec)) return Error{parent.string() + ": no such directory"};
  std::string temp_name = (parent / ("." + dir.filename().string() + ".capture.XXXXXX")).string();
  if (!mkdtemp(temp_name.data())) return Error{parent.string() + ": cannot create a temporary directory"};
  const fs::path temp(temp_name);
  Status filled = Error{"not captured"};
  try {
    filled = fill_snapshot(temp, options, tool_version);
  } catch (const fs::filesystem_error& e) {
    filled = Error{dir.string() + ": " + e.what()};
  }
  if (filled) {
    fs::remove(dir, ec);  // an empty directory left by the caller
    fs::rename(temp, dir, ec);
    if (ec) filled = Error{dir.string() + ": cannot move the snapshot into place: " + ec.message()};
  }
  if (!filled) fs::remove_all(temp, ec);
  return filled;
}

}  // namespace nccltune
