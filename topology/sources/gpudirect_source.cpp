#include "topology/sources/gpudirect_source.h"

#include "topology/sources/sysfs_source.h"

namespace nccltune {
namespace fs = std::filesystem;

namespace {

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::optional<std::string> peer_memory_module(const fs::path& sys) {
  std::error_code ec;
  if (!fs::is_directory(sys / "module", ec)) return std::nullopt;
  if (present(sys / "module/nvidia_peermem")) return "nvidia_peermem";
  if (present(sys / "module/nv_peer_mem")) return "nv_peer_mem";
  // MLNX_OFED's peer-memory interface without either module's directory (a renamed build).
  if (present(sys / "kernel/mm/memory_peers/nv_mem/version") ||
      present(sys / "kernel/mm/memory_peers/nv_mem_nc/version"))
    return "nv_mem peer client";
  return std::string();
}

// The open kernel module says so in /proc/driver/nvidia/version; without that file, the module's
// taint flags tell: the proprietary module taints the kernel 'P', the open one (MIT/GPL) does not.
std::optional<bool> open_kernel_module(const fs::path& sys, const fs::path& proc) {
  if (const auto banner = read_attribute_line(proc / "driver/nvidia/version"))
    return banner->find("Open Kernel Module") != std::string::npos;
  if (const auto taint = read_attribute_line(sys / "module/nvidia/taint"))
    return taint->find('P') == std::string::npos;
  return std::nullopt;
}

}  // namespace

GpuDirectFacts read_gpudirect_facts(const fs::path& sys_root, const fs::path& proc_root) {
  GpuDirectFacts facts;
  facts.peer_memory = peer_memory_module(sys_root);
  facts.kernel_release = read_attribute_line(proc_root / "sys/kernel/osrelease");
  if (facts.kernel_release && facts.kernel_release->empty()) facts.kernel_release.reset();
  facts.open_kernel_module = open_kernel_module(sys_root, proc_root);
  facts.nvidia_module_version = read_attribute_line(sys_root / "module/nvidia/version");
  if (facts.nvidia_module_version && facts.nvidia_module_version->empty())
    facts.nvidia_module_version.reset();
  return facts;
}

}  // namespace nccltune
