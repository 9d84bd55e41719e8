// GPUDirect RDMA's prerequisites as the kernel exposes them: which peer-memory module is loaded,
// the kernel release, and whether the NVIDIA driver is the open kernel module (dma-buf needs it).
// Read below a sysfs root and a procfs root (`/sys` and `/proc` live, a snapshot's `sysfs/` and
// `proc/` replayed), so both are the same code path; the files are listed here for the snapshot.
#pragma once

#include <array>
#include <filesystem>

#include "topology/node_topology.h"

namespace nccltune {

// Under the sysfs root. NCCL looks for the first three (src/transport/net_ib, ncclIbGdrSupport):
// nvidia_peermem's version, or the nv_mem peer client that nv_peer_mem (and MLNX_OFED's
// nvidia_peermem) registers. The nvidia module's version and taint flags say which driver it is.
// A loaded module's initstate ("live") keeps its directory in a snapshot when it has no version.
inline constexpr std::array kGpuDirectSysFiles{"module/nvidia_peermem/version",
                                               "kernel/mm/memory_peers/nv_mem/version",
                                               "kernel/mm/memory_peers/nv_mem_nc/version",
                                               "module/nvidia_peermem/initstate",
                                               "module/nv_peer_mem/initstate",
                                               "module/nvidia/version",
                                               "module/nvidia/taint"};
// Under the procfs root: the kernel release, and the driver's banner ("... Open Kernel Module ...").
inline constexpr std::array kGpuDirectProcFiles{"sys/kernel/osrelease", "driver/nvidia/version"};

// Facts the roots hold. peer_memory is known only when the sysfs root has module/ (a snapshot taken
// before it was captured has not): then "" means none is loaded.
GpuDirectFacts read_gpudirect_facts(const std::filesystem::path& sys_root,
                                    const std::filesystem::path& proc_root);

}  // namespace nccltune
