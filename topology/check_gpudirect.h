// The GPUDirect RDMA part of `nccltune check`, on a node with GPUs and RDMA NICs: can NCCL register
// GPU memory with the NICs (a peer-memory module or dma-buf), and does an IOMMU translate their DMA.
// With the ACS findings already in the report, it says whether GPUDirect RDMA is ready and what
// blocks it (CheckReport::gdr).
#pragma once

#include "topology/checks.h"

namespace nccltune {

void check_gpudirect(const NodeTopology& topology, CheckReport& report);

}  // namespace nccltune
