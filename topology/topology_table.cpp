#include "topology/topology_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "topology/affinity.h"
#include "topology/peak_model.h"

namespace nccltune {

namespace {

std::string gen_width(std::optional<int> gen, std::optional<int> width) {
  return fmt::format("Gen{} x{}", gen ? std::to_string(*gen) : "?", width ? std::to_string(*width) : "?");
}

// Sizes as nvidia-smi prints them, in MiB, and in GiB when whole: "24564 MiB", "BAR1 128 GiB".
std::string memory_text(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20, kGiB = std::uint64_t{1} << 30;
  if (bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes % kMiB == 0 || bytes > kMiB) return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} bytes", bytes);
}

std::string join_sources(const NodeTopology& topology) {
  std::string out;
  for (auto source : topology.sources_used) out += (out.empty() ? "" : ", ") + std::string(to_string(source));
  return out.empty() ? "none" : out;
}

// "GPU0    cluster 9c6f5af3-...  clique 4026  completed, Success  health 0x1aa ok": each GPU's
// NVLink domain and registration, for nodes where a GPU has a fabric.
std::string fabric_lines(const NodeTopology& topology) {
  const bool any = std::any_of(topology.gpus.begin(), topology.gpus.end(),
                               [](const Gpu& g) { return g.fabric.has_value(); });
  if (!any) return "";
  std::string out = "\nNVLink fabric (cluster UUID, clique, registration, health):\n";
  for (const auto& gpu : topology.gpus) {
    if (!gpu.fabric) {
      out += fmt::format("{:<8}none\n", gpu_id(gpu.index));
      continue;
    }
    const GpuFabric& fabric = *gpu.fabric;
    std::string health = "unknown";
    if (fabric.health_mask || fabric.summary) {
      health.clear();
      for (const auto& problem : fabric_health_problems(fabric))
        health += (health.empty() ? "" : ", ") + problem.meaning;
      if (health.empty()) health = "ok";
      if (fabric.health_mask) health = health_mask_text(*fabric.health_mask) + " " + health;
    }
    out += fmt::format("{:<8}cluster {}  clique {}  {}, {}  health {}{}\n", gpu_id(gpu.index),
                       fabric.cluster_uuid.value_or("?"),
                       fabric.clique_id ? std::to_string(*fabric.clique_id) : "?", to_string(fabric.state),
                       fabric.status.value_or("status ?"), health,
                       fabric.in_multi_node_domain() ? "  MNNVL" : "");
  }
  return out;
}

}  // namespace

std::string pcie_link_text(const PcieLink& link) {
  if (!link.known()) return "-";
  std::string text = gen_width(link.gen, link.width);
  if (link.width_degraded() || link.speed_degraded())
    text += " (max " + gen_width(link.max_gen, link.max_width) + ") *";
  return text;
}

std::string render_topology_table(const NodeTopology& topology) {
  std::string out;
  const std::string nvswitch = topology.nvswitch ? (*topology.nvswitch ? "yes" : "no") : "unknown";
  out += fmt::format("{}: {} GPUs, {} NICs, NVSwitch {} (sources: {})\n", topology.host, topology.gpus.size(),
                     topology.nics.size(), nvswitch, join_sources(topology));
  if (topology.gpus.empty()) {
    out += "No NVIDIA GPU found on this node.\n";
  }
  std::vector<std::string> ids;
  for (const auto& gpu : topology.gpus) ids.push_back(gpu_id(gpu.index));
  for (const auto& nic : topology.nics) ids.push_back(nic_id(nic.index));

  if (!ids.empty()) {
    size_t affinity_width = std::string("CPU Affinity").size();
    for (const auto& gpu : topology.gpus)
      affinity_width = std::max(affinity_width, gpu.cpu_affinity.value_or("N/A").size());
    out += "\n" + fmt::format("{:<8}", "");
    for (const auto& id : ids) out += fmt::format("{:<8}", id);
    out += fmt::format("{:<{}}  {}\n", "CPU Affinity", affinity_width, "NUMA Affinity");
    for (size_t row = 0; row < ids.size(); ++row) {
      out += fmt::format("{:<8}", ids[row]);
      for (size_t col = 0; col < ids.size(); ++col) {
        std::string cell = " X";
        if (row != col) {
          const DeviceLink* link = topology.find_link(ids[row], ids[col]);
          cell = link ? to_string(link->type) : "?";
        }
        out += fmt::format("{:<8}", cell);
      }
      if (row < topology.gpus.size()) {
        const Gpu& gpu = topology.gpus[row];
        out += fmt::format("{:<{}}  {}", gpu.cpu_affinity.value_or("N/A"), affinity_width,
                           gpu.numa ? std::to_string(*gpu.numa) : "N/A");
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += "\n";
    }
  }

  const auto assignments = assign_nearest_nics(topology);
  out += "\n" + fmt::format("{:<8}{:<14}{:<28}{}\n", "Device", "PCI", "PCIe link", "Details");
  for (const auto& gpu : topology.gpus) {
    std::string details = gpu.name.value_or("(name unknown)");
    if (gpu.memory_bytes) details += ", " + memory_text(*gpu.memory_bytes);
    if (gpu.bar1_bytes) details += ", BAR1 " + memory_text(*gpu.bar1_bytes);
    const auto& a = assignments[static_cast<size_t>(gpu.index)];
    if (a.nic) {
      const Nic& nic = topology.nics[static_cast<size_t>(*a.nic)];
      std::string how = a.numa_decided ? ", by NUMA" : "";
      if (a.link && a.link->kind >= LinkKind::phb && reaches_nic_through_c2c(gpu, nic))
        how = ", via NVLink-C2C";
      details += fmt::format("; nearest NIC{} ({}, {}{})", *a.nic, nic.name.value_or("?"),
                             a.link ? to_string(*a.link) : "?", how);
    } else if (!topology.nics.empty()) {
      details += "; nearest NIC unknown";
    }
    out += fmt::format("{:<8}{:<14}{:<28}{}\n", gpu_id(gpu.index), gpu.pci.value_or("-"),
                       pcie_link_text(gpu.pcie), details);
  }
  for (const auto& nic : topology.nics) {
    std::string details = nic.name.value_or("(name unknown)");
    if (nic.link_layer) details += " " + *nic.link_layer;
    if (nic.state) details += " " + *nic.state;
    if (nic.rate_gbps) details += fmt::format(" {:g} Gb/s", *nic.rate_gbps);
    if (nic.netdev) details += " " + *nic.netdev;
    if (nic.numa) details += fmt::format(" NUMA {}", *nic.numa);
    out += fmt::format("{:<8}{:<14}{:<28}{}\n", nic_id(nic.index), nic.pci.value_or("-"),
                       pcie_link_text(nic.pcie), details);
  }
  const bool any_degraded =
      std::any_of(topology.gpus.begin(), topology.gpus.end(),
                  [](const Gpu& g) { return g.pcie.width_degraded() || g.pcie.speed_degraded(); }) ||
      std::any_of(topology.nics.begin(), topology.nics.end(),
                  [](const Nic& n) { return n.pcie.width_degraded() || n.pcie.speed_degraded(); });
  if (any_degraded) out += "  * current PCIe link below its maximum\n";
  out += fabric_lines(topology);

  const NodePeak peak = node_peak(topology);
  auto rate_text = [](const LineRate& rate) {
    return rate.gbps ? fmt::format("{:.1f} GB/s ({})", *rate.gbps, rate.bottleneck.value_or("?"))
                     : "unknown (" + rate.unknown_reason.value_or("?") + ")";
  };
  out += "\nPeak per GPU and direction: within the node " + rate_text(peak.intra_node) + "; across nodes " +
         rate_text(peak.inter_node) + "\n";

  out +=
      "\nLegend: X self, NV# bonded NVLinks, PIX one PCIe switch, PXB several switches, "
      "PHB through the host bridge, NODE across host bridges in a NUMA node, SYS across NUMA nodes\n";
  for (const auto& note : topology.notes) out += "Note: " + note + "\n";
  return out;
}

}  // namespace nccltune
