#include "topology/peak_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "base/collective_names.h"
#include "topology/affinity.h"

namespace nccltune {

namespace {

// NVLink rate per link and direction, GB/s, by generation. Each row: the per-GPU total NVIDIA
// publishes for the SXM part (both directions summed) / links per GPU / 2.
struct NvlinkGeneration {
  int generation;
  double link_gbps;
};
constexpr std::array kNvlinkRates = {
    NvlinkGeneration{1, 20.0},  // P100 SXM2: 4 links, 160 GB/s (Tesla P100 datasheet)
    NvlinkGeneration{2, 25.0},  // V100 SXM2: 6 links, 300 GB/s (Tesla V100 datasheet)
    NvlinkGeneration{3, 25.0},  // A100 SXM4: 12 links, 600 GB/s (A100 datasheet)
    NvlinkGeneration{4, 25.0},  // H100/H200 SXM5: 18 links, 900 GB/s (H100, H200 datasheets)
    NvlinkGeneration{5, 50.0},  // B200: 18 links, 1.8 TB/s (DGX B200 datasheet)
};

// GPU models whose name says their NVLink generation. Data-center parts only: the NVLink bridges
// of workstation boards (A40, RTX A6000) run other per-link rates, so those stay unknown.
struct ModelGeneration {
  std::string_view name_part;
  int generation;
};
constexpr std::array kModelGenerations = {
    ModelGeneration{"P100", 1}, ModelGeneration{"V100", 2}, ModelGeneration{"A100", 3},
    ModelGeneration{"A800", 3}, ModelGeneration{"A30", 3},  ModelGeneration{"H100", 4},
    ModelGeneration{"H200", 4}, ModelGeneration{"H800", 4}, ModelGeneration{"H20", 4},
    ModelGeneration{"B100", 5}, ModelGeneration{"B200", 5}, ModelGeneration{"B300", 5},
};

// Compute capability (major*10+minor) to NVLink generation, for GPUs without a known name: each
// data-center architecture shipped one generation (sm 86/89, workstation parts, are left out).
struct SmGeneration {
  int sm;
  int generation;
};
constexpr std::array kSmGenerations = {
    SmGeneration{60, 1}, SmGeneration{70, 2},  SmGeneration{80, 3},
    SmGeneration{90, 4}, SmGeneration{100, 5}, SmGeneration{103, 5},
};

LineRate unknown(std::string why) {
  return {std::nullopt, std::nullopt, std::move(why)};
}

// A GPU's PCIe link at the speed it reaches under load: the current width (a narrower link stays
// narrow), the maximum generation (GPUs drop speed when idle). Null when either is unknown.
std::optional<double> pcie_link_gbps(const PcieLink& link, int& gen) {
  std::optional<int> g = link.max_gen ? link.max_gen : link.gen;
  if (!g || !link.width) return std::nullopt;
  auto lane = pcie_lane_gbps(*g);
  if (!lane) return std::nullopt;
  gen = *g;
  return *lane * *link.width;
}

LineRate intra_node_rate(const NodeTopology& topology) {
  if (topology.gpus.empty()) return unknown("no GPU found");
  if (topology.gpus.size() == 1) return unknown("one GPU: no link within the node to cross");
  bool all_nvlink = true;
  for (const auto& gpu : topology.gpus) {
    if (!gpu.nvlinks) return unknown(gpu_id(gpu.index) + "'s NVLink count is not known");
    if (*gpu.nvlinks == 0) all_nvlink = false;
  }
  if (all_nvlink) {
    std::optional<double> slowest;
    std::string what;
    for (const auto& gpu : topology.gpus) {
      auto generation = nvlink_generation(gpu);
      if (!generation)
        return unknown(gpu_id(gpu.index) +
                       "'s NVLink generation is not known (no known model name or compute capability)");
      double gbps = *nvlink_link_gbps(*generation) * *gpu.nvlinks;
      if (!slowest || gbps < *slowest) {
        slowest = gbps;
        what = fmt::format("NVLink{} x{}", *generation, *gpu.nvlinks);
      }
    }
    return {slowest, what, {}};
  }
  // Some GPU has no NVLink: the GPUs meet over PCIe, at the slowest GPU's link.
  std::optional<double> slowest;
  std::string what;
  for (const auto& gpu : topology.gpus) {
    int gen = 0;
    auto gbps = pcie_link_gbps(gpu.pcie, gen);
    if (!gbps)
      return unknown(gpu_id(gpu.index) + " has no NVLink and its PCIe generation or width is not known");
    if (!slowest || *gbps < *slowest) {
      slowest = gbps;
      what = fmt::format("PCIe Gen{} x{}", gen, *gpu.pcie.width);
    }
  }
  return {slowest, what, {}};
}

std::string nic_family(const Nic& nic) {  // "mlx5" of "mlx5_3"
  if (!nic.name) return "NIC";
  auto underscore = nic.name->rfind('_');
  return underscore == std::string::npos || underscore == 0 ? *nic.name : nic.name->substr(0, underscore);
}

LineRate inter_node_rate(const NodeTopology& topology) {
  if (topology.gpus.empty()) return unknown("no GPU found");
  auto assignments = assign_nearest_nics(topology);
  std::map<int, int> gpus_per_nic;
  for (const auto& assignment : assignments) {
    if (!assignment.nic) return unknown(gpu_id(assignment.gpu) + " has no RDMA NIC");
    ++gpus_per_nic[*assignment.nic];
  }
  std::optional<double> slowest;
  std::string what;
  for (const auto& [index, sharing] : gpus_per_nic) {
    const Nic& nic = topology.nics.at(static_cast<std::size_t>(index));
    if (nic.state && *nic.state != "ACTIVE")
      return unknown(nic.name.value_or(nic_id(index)) + " is " + *nic.state + ", not ACTIVE");
    if (!nic.rate_gbps || *nic.rate_gbps <= 0)
      return unknown(nic.name.value_or(nic_id(index)) + "'s rate is not known");
    double gbps = *nic.rate_gbps / 8.0 / sharing;
    if (!slowest || gbps < *slowest) {
      slowest = gbps;
      what = sharing == 1
                 ? fmt::format("1x {} {:g} Gb/s per GPU", nic_family(nic), *nic.rate_gbps)
                 : fmt::format("1/{} of {} {:g} Gb/s per GPU", sharing, nic_family(nic), *nic.rate_gbps);
    }
  }
  return {slowest, what, {}};
}

}  // namespace

std::optional<double> pcie_lane_gbps(int gen) {
  switch (gen) {  // GT/s x coding efficiency / 8 bits (PCI Express Base Specification 1.0-6.0)
    case 1: return 2.5 * 8 / 10 / 8;
    case 2: return 5.0 * 8 / 10 / 8;
    case 3: return 8.0 * 128 / 130 / 8;
    case 4: return 16.0 * 128 / 130 / 8;
    case 5: return 32.0 * 128 / 130 / 8;
    case 6: return 64.0 * 242 / 256 / 8;
    default: return std::nullopt;
  }
}

std::optional<double> nvlink_link_gbps(int generation) {
  for (const auto& row : kNvlinkRates)
    if (row.generation == generation) return row.link_gbps;
  return std::nullopt;
}

std::optional<int> nvlink_generation(const Gpu& gpu) {
  if (gpu.name) {
    for (const auto& row : kModelGenerations) {
      // A whole model number: "A100" in "A100-SXM4-80GB", not in "RTX A1000".
      auto at = gpu.name->find(row.name_part);
      auto end = at + row.name_part.size();
      if (at != std::string::npos &&
          (end == gpu.name->size() || !std::isdigit(static_cast<unsigned char>((*gpu.name)[end]))))
        return row.generation;
    }
  }
  if (gpu.sm)
    for (const auto& row : kSmGenerations)
      if (row.sm == *gpu.sm) return row.generation;
  return std::nullopt;
}

NodePeak node_peak(const NodeTopology& topology) {
  NodePeak peak;
  peak.intra_node = intra_node_rate(topology);
  peak.inter_node = inter_node_rate(topology);
  // A Grace-Blackwell superchip (NVLink5 and NVLink-C2C to its Grace) sits in an NVL72 rack
  // (GB200 NVL72 datasheet: 72 GPUs in one NVLink domain through 9 NVLink switch trays).
  const bool grace_blackwell =
      !topology.gpus.empty() && std::all_of(topology.gpus.begin(), topology.gpus.end(), [](const Gpu& gpu) {
        return gpu.c2c == true && nvlink_generation(gpu) == 5 && gpu.nvlinks.value_or(0) > 0;
      });
  if (grace_blackwell) peak.nvlink_domain_gpus = 72;
  return peak;
}

LineRate collective_peak(const NodePeak& node, std::string_view op, int nodes, int gpus_per_node) {
  if (!is_known_collective(op))
    return unknown("no peak model for the collective '" + std::string(op) + "'");
  if (nodes < 1 || gpus_per_node < 1) return unknown("no rank");
  const int g = gpus_per_node;
  if (nodes == 1) return g == 1 ? unknown("one rank: no bus to cross") : node.intra_node;
  if (node.nvlink_domain_gpus && g * nodes <= *node.nvlink_domain_gpus) {
    if (!node.intra_node.gbps) return node.intra_node;
    return {node.intra_node.gbps,
            *node.intra_node.bottleneck +
                fmt::format(", one NVLink domain of up to {} GPUs across nodes", *node.nvlink_domain_gpus),
            {}};
  }
  if (!node.inter_node.gbps) return node.inter_node;
  const int n = g * nodes;
  const bool alltoall = op == "alltoall";
  const double network = alltoall ? *node.inter_node.gbps * (n - 1) / (n - g) : *node.inter_node.gbps * g;
  std::string what = alltoall ? fmt::format("network, {}; alltoall sends {}/{} of its bytes off the node",
                                            *node.inter_node.bottleneck, n - g, n - 1)
                     : g == 1 ? "network, " + *node.inter_node.bottleneck
                              : fmt::format("network, {} x {} GPUs", *node.inter_node.bottleneck, g);
  if (g > 1) {
    if (!node.intra_node.gbps) return node.intra_node;
    if (*node.intra_node.gbps <= network) return node.intra_node;
  }
  return {network, what, {}};
}

}  // namespace nccltune
