#include "topology/check_gpudirect.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "topology/gpudirect.h"

namespace nccltune {

namespace {

// What NCCL does without a way to register GPU memory: its IB transport offers the NIC host
// pointers only, so every GPU's network traffic is copied through host memory.
constexpr const char* kStagedThroughHost =
    "NCCL cannot register GPU memory with the NICs, so GPUDirect RDMA is off whatever NCCL_NET_GDR_LEVEL "
    "says and network traffic is staged through host memory";

void check_peer_memory(const GdrMemory& memory, std::vector<Finding>& out) {
  switch (memory.how) {
    case GdrRegistration::peer_memory:
      out.push_back({"gdr_peer_memory", "node", Verdict::pass,
                     memory.detail + ": NCCL registers GPU memory with the NICs (GPUDirect RDMA)"});
      return;
    case GdrRegistration::dma_buf:
      out.push_back({"gdr_peer_memory", "node", Verdict::pass,
                     "no peer-memory module, but dma-buf (" + memory.detail +
                         "): NCCL registers GPU memory through dma-buf (NCCL_DMABUF_ENABLE, on by default)"});
      return;
    case GdrRegistration::none:
      out.push_back(
          {"gdr_peer_memory", "node", Verdict::warn,
           "neither nvidia_peermem nor nv_peer_mem is loaded, and dma-buf cannot be used (" + memory.detail +
               "): " + kStagedThroughHost +
               "; load nvidia_peermem (modprobe nvidia_peermem, and at boot), or run kernel 5.12 or "
               "later with the open kernel module"});
      return;
    case GdrRegistration::unknown:
      if (memory.detail.empty()) return;  // nothing read: say nothing rather than guess
      out.push_back({"gdr_peer_memory", "node", Verdict::warn,
                     "neither nvidia_peermem nor nv_peer_mem is loaded, and whether dma-buf can be used "
                     "cannot be told (" +
                         memory.detail +
                         "); if NCCL logs 'GPU Direct RDMA Disabled', load nvidia_peermem (modprobe "
                         "nvidia_peermem)"});
      return;
  }
}

void check_iommu(const IommuSummary& iommu, std::vector<Finding>& out) {
  if (iommu.known == 0) return;
  if (iommu.translated.empty()) {
    out.push_back({"gdr_iommu", "node", Verdict::pass,
                   "no IOMMU translation in front of the GPUs and NICs (passthrough, or no IOMMU)"});
    return;
  }
  out.push_back(
      {"gdr_iommu", "node", Verdict::warn,
       fmt::format("the IOMMU translates the DMA of {} (group type {})", fmt::join(iommu.translated, ", "),
                   fmt::join(iommu.types, ", ")) +
           "): the NICs' reads and writes of GPU memory are translated, slower at best and faulting "
           "at worst, and NCCL does not see it (it keeps GPUDirect RDMA on as NCCL_NET_GDR_LEVEL "
           "allows); boot with iommu=pt (intel_iommu=on iommu=pt, or amd_iommu=pt), or set these "
           "groups' type to identity"});
}

}  // namespace

void check_gpudirect(const NodeTopology& topology, CheckReport& report) {
  if (topology.gpus.empty() || topology.nics.empty()) return;
  const GdrMemory memory = gdr_memory(topology);
  const IommuSummary iommu = iommu_summary(topology);
  check_peer_memory(memory, report.findings);
  check_iommu(iommu, report.findings);

  std::vector<std::string> blocked_by;
  if (memory.how == GdrRegistration::none) blocked_by.push_back("gdr_peer_memory");
  if (!iommu.translated.empty()) blocked_by.push_back("gdr_iommu");
  if (std::any_of(report.findings.begin(), report.findings.end(),
                  [](const Finding& f) { return f.check == "pcie_acs" && f.verdict != Verdict::pass; }))
    blocked_by.push_back("pcie_acs");
  if (!blocked_by.empty())
    report.gdr = GdrStatus{false, blocked_by};
  else if (memory.how == GdrRegistration::peer_memory || memory.how == GdrRegistration::dma_buf)
    report.gdr = GdrStatus{true, {}};
}

}  // namespace nccltune
