// GPUDirect RDMA's prerequisites judged from a node's facts: whether NCCL can register GPU memory
// with the RDMA NICs (a peer-memory module, or dma-buf), and whether an IOMMU translates the DMA of
// the GPUs and NICs. Pure functions of NodeTopology.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topology/node_topology.h"

namespace nccltune {

// (major, minor) of a kernel release, "5.15.0-105-generic" -> {5, 15}; nullopt when it does not
// start with two numbers.
std::optional<std::pair<int, int>> kernel_version(std::string_view release);

// The first number of a driver version, "550.54.15" -> 550.
std::optional<int> driver_branch(std::string_view version);

// How NCCL can register GPU memory with an RDMA NIC, the first of GPUDirect RDMA's conditions.
// NCCL (src/transport/net_ib) offers GPU pointers to the NIC when a peer-memory module is loaded
// (ncclIbGdrSupport: nvidia_peermem's or the nv_mem peer client's version file exists), or when
// dma-buf works end to end (NCCL_DMABUF_ENABLE, on by default): the CUDA driver reports
// CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, which only the open kernel module does (R515 and later;
// the proprietary one cannot use the kernel's GPL-only dma-buf symbols), and the kernel takes
// ibv_reg_dmabuf_mr, whose RDMA support came in Linux 5.12. Without either NCCL runs without
// GPUDirect RDMA whatever NCCL_NET_GDR_LEVEL says.
enum class GdrRegistration { peer_memory, dma_buf, none, unknown };
struct GdrMemory {
  GdrRegistration how = GdrRegistration::unknown;
  std::string detail;  // "nvidia_peermem loaded"; "kernel 5.4.0-216-generic is older than 5.12; ..."
};
// `unknown` with an empty detail when the peer-memory modules were not read at all.
GdrMemory gdr_memory(const NodeTopology& topology);

inline constexpr std::pair<int, int> kDmaBufKernel{5, 12};
inline constexpr int kDmaBufDriverBranch = 515;

// Whether an IOMMU group type translates DMA ("DMA", "DMA-FQ"): the NIC's reads and writes of GPU
// memory then go through the IOMMU, or fault, instead of straight across the PCIe switch.
bool iommu_translates(const IommuDomain& domain);

// How many GPUs and NICs have a known IOMMU domain, which of them it translates ("GPU0", "NIC3")
// and the translating group types seen ("DMA-FQ").
struct IommuSummary {
  int known = 0;
  std::vector<std::string> translated, types;
};
IommuSummary iommu_summary(const NodeTopology& topology);

}  // namespace nccltune
