// The hardware peak: the line rate of the bottleneck a collective's bytes cross, so a measured
// bus bandwidth can be read as a share of what the links can carry. nccl-tests defines busbw so
// that it "should reflect the speed of the hardware bottleneck" (NVLink, PCI or network); this is
// that speed. Pure functions of the node's facts, the node count and the collective; a fact that
// is missing makes the peak unknown, never guessed.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "topology/node_topology.h"

namespace nccltune {

// One line rate per GPU and direction, in GB/s (1e9 B/s), and what it is: "NVLink4 x18",
// "PCIe Gen4 x16", "1x mlx5 400 Gb/s per GPU". Both null when unknown, and then unknown_reason
// names the missing fact.
struct LineRate {
  std::optional<double> gbps;
  std::optional<std::string> bottleneck;
  std::optional<std::string> unknown_reason;
  friend bool operator==(const LineRate&, const LineRate&) = default;
};

struct NodePeak {
  // Between the GPUs of one node: NVLink links x per-link rate of their generation; without
  // NVLink, the slowest GPU's PCIe link (gen x width).
  LineRate intra_node;
  // Out of the node: the RDMA NIC rate each GPU gets (its nearest NIC's rate, shared with the
  // other GPUs that NIC serves), the slowest GPU's.
  LineRate inter_node;
  // GPUs one NVLink domain holds across nodes: Grace-Blackwell trays (GB200, GB300) reach the
  // NVLink switch trays of their NVL72 rack, so up to 72 GPUs on up to 18 trays talk over NVLink,
  // not the network. Null for nodes whose NVLink ends at the node.
  std::optional<int> nvlink_domain_gpus;
  friend bool operator==(const NodePeak&, const NodePeak&) = default;
};

NodePeak node_peak(const NodeTopology& topology);

// The busbw ceiling of one collective (nccl-tests op name: all_reduce, all_gather,
// reduce_scatter, broadcast, reduce, alltoall) on `nodes` nodes like this one, `gpus_per_node`
// ranks (one per GPU) on each.
//  - one node: the intra-node rate (unknown for one rank: its busbw is 0).
//  - more, all in one multi-node NVLink domain (nvlink_domain_gpus): the intra-node rate.
//  - more: the lower of the intra-node rate and what the network lets through. For the ring and
//    tree collectives every node sends and receives busbw x time bytes in all across its rails, so
//    the network allows the per-GPU NIC rate x GPUs per node (2 DGX A100 with 8x HDR200: 200 GB/s;
//    NCCL's authors measure 192). alltoall sends only the (n-g)/n of each rank's bytes bound for
//    other nodes over the network, so it allows the per-GPU NIC rate x (n-1)/(n-g).
// Algorithms that reduce inside the switch (NVLS, SHARP) and NCCL's tree across nodes move fewer
// bytes than busbw counts, so they can report more than this; that is not an error.
LineRate collective_peak(const NodePeak& node, std::string_view op, int nodes, int gpus_per_node);


// PCIe payload rate of one lane, per direction, GB/s: the transfer rate less the line coding
// (8b/10b to Gen2, 128b/130b from Gen3, FLIT 242/256 at Gen6). Null for an unknown generation.
std::optional<double> pcie_lane_gbps(int gen);

// Per-link, per-direction NVLink rate of a generation, GB/s; null when unknown.
std::optional<double> nvlink_link_gbps(int generation);

// The NVLink generation of a GPU, from its model name (H100 -> 4), else its compute capability
// (sm 90 -> 4); null when neither says.
std::optional<int> nvlink_generation(const Gpu& gpu);

}  // namespace nccltune
