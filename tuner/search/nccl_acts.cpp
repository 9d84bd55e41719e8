#include "search/nccl_acts.h"

#include <cstdlib>

namespace nccltune {

std::optional<std::string> why_nccl_cannot_act(const std::string& name, const ShapeFacts& facts) {
  const bool rdma = facts.ib && facts.nics > 0;
  if (name.starts_with("NCCL_IB_")) {
    if (!rdma) return "NCCL's IB transport reads it, and these nodes have no InfiniBand or RoCE NIC";
    if (facts.nodes <= 1) return "NCCL's IB transport reads it, and one node uses no network";
  }
  if (name.starts_with("NCCL_NET_GDR_") || name.starts_with("NCCL_GDRCOPY_")) {
    if (facts.gdr == false) return "it acts only with GPUDirect RDMA, which these nodes do not have";
    if (!rdma) return "it acts only with GPUDirect RDMA, which needs an InfiniBand or RoCE NIC";
    if (facts.nodes <= 1) return "it acts only on the network, and one node uses none";
  }
  if (name.starts_with("NCCL_NVLS_") && (!facts.nvswitch || facts.gpus_per_node < 2))
    return "NVLS needs NVSwitch multicast and 2 or more GPUs on a node";
  return std::nullopt;
}

bool forces_nvls(const std::string& value) {
  // ncclLoadParam: strtoll base 0, trailing text ignored, no digits 0; empty is the default (2).
  if (value.empty()) return false;
  const long long read = std::strtoll(value.c_str(), nullptr, 0);
  return read != 0 && read != 2;
}

}  // namespace nccltune
