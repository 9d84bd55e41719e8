#include "topology/gpudirect.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

namespace nccltune {

namespace {

// The number at the start of text, and the rest after it.
std::optional<std::pair<int, std::string_view>> leading_number(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return std::pair(value, text.substr(static_cast<std::size_t>(end - text.data())));
}

}  // namespace

std::optional<std::pair<int, int>> kernel_version(std::string_view release) {
  const auto major = leading_number(release);
  if (!major || major->second.empty() || major->second.front() != '.') return std::nullopt;
  const auto minor = leading_number(major->second.substr(1));
  if (!minor) return std::nullopt;
  return std::pair(major->first, minor->first);
}

std::optional<int> driver_branch(std::string_view version) {
  const auto branch = leading_number(version);
  if (!branch) return std::nullopt;
  return branch->first;
}

GdrMemory gdr_memory(const NodeTopology& topology) {
  const GpuDirectFacts& facts = topology.gpudirect;
  if (!facts.peer_memory) return {};
  if (!facts.peer_memory->empty()) return {GdrRegistration::peer_memory, *facts.peer_memory + " loaded"};

  const std::optional<std::string>& driver =
      topology.driver_version ? topology.driver_version : facts.nvidia_module_version;
  const auto kernel = facts.kernel_release ? kernel_version(*facts.kernel_release) : std::nullopt;
  const auto branch = driver ? driver_branch(*driver) : std::nullopt;
  std::vector<std::string> against, unknown;
  if (!kernel)
    unknown.push_back("the kernel release");
  else if (*kernel < kDmaBufKernel)
    against.push_back("kernel " + *facts.kernel_release + " is older than 5.12");
  if (!facts.open_kernel_module)
    unknown.push_back("which NVIDIA kernel module is loaded");
  else if (!*facts.open_kernel_module)
    against.push_back("the NVIDIA driver is the proprietary kernel module, and dma-buf needs the open one");
  if (branch && *branch < kDmaBufDriverBranch) against.push_back("driver " + *driver + " is older than R515");
  if (!against.empty()) return {GdrRegistration::none, fmt::format("{}", fmt::join(against, "; "))};
  if (!unknown.empty())
    return {GdrRegistration::unknown, fmt::format("not known: {}", fmt::join(unknown, ", "))};
  return {GdrRegistration::dma_buf, "kernel " + *facts.kernel_release + ", open kernel module" +
                                        (driver ? " " + *driver : std::string())};
}

bool iommu_translates(const IommuDomain& domain) {
  return domain == "DMA" || domain == "DMA-FQ";
}

IommuSummary iommu_summary(const NodeTopology& topology) {
  IommuSummary summary;
  auto visit = [&](const std::string& id, const IommuDomain& domain) {
    if (!domain) return;
    ++summary.known;
    if (!iommu_translates(domain)) return;
    summary.translated.push_back(id);
    if (std::find(summary.types.begin(), summary.types.end(), *domain) == summary.types.end())
      summary.types.push_back(*domain);
  };
  for (const Gpu& gpu : topology.gpus) visit(gpu_id(gpu.index), gpu.iommu);
  for (const Nic& nic : topology.nics) visit(nic_id(nic.index), nic.iommu);
  return summary;
}

}  // namespace nccltune
