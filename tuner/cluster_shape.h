// ClusterShape: what a profile is for. Each node's type (GPU model and count, NVLink/NVSwitch,
// NICs, GPU-NIC affinity, NCCL major.minor) gets a stable key; a cluster is N nodes of one type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "node_topology.h"
#include "result.h"

namespace nccltune {

struct NodeType {
  std::string gpu;            // "NVIDIA H100 80GB HBM3"
  int gpus = 0;               // per node
  int gpu_sm = 0;             // 90
  std::optional<bool> nvswitch;
  int nvlinks = 0;            // per GPU, 0 when none or unknown
  std::optional<int> nics;    // RDMA NICs; nullopt when the topology does not describe these GPUs
  std::string nic;            // "mlx5 InfiniBand 400 Gb/s", or "" without NICs
  bool nic_ethernet = false;  // RoCE rather than InfiniBand
  int nic_rate_gbps = 0;
  std::string gpu_nic_affinity;  // worst nearest-NIC link over the GPUs: "PIX", ..., or ""
  std::string nccl_version;   // "2.28.9"
  std::string cuda_driver;    // "13.0"

  friend bool operator==(const NodeType&, const NodeType&) = default;
};

// What the worker saw of one GPU through the CUDA driver, for nodes whose topology shows no GPU
// (CPU-only hosts running the fake stack, or a topology source that cannot see them).
struct DeviceFacts {
  std::string name;
  int sm = 0;
};

// `ranks_on_node` stands in for the GPU count when the topology shows none.
NodeType node_type(const NodeTopology& topology, const DeviceFacts& device, int ranks_on_node,
                   const std::string& nccl_version, const std::string& cuda_driver);

// tune measures one rank per GPU, and a profile says it is for `gpus` ranks per node (the
// plugin and env match jobs by that): why a node whose topology shows `gpus` GPUs but runs
// `ranks_on_node` ranks cannot be tuned, or nullopt when they agree (or no GPU is seen).
std::optional<std::string> rank_per_gpu_problem(const std::string& host, int gpus, int ranks_on_node, int nodes);

// "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28"
std::string node_type_key(const NodeType& type);

struct ClusterShape {
  NodeType node;
  int nodes = 1;
  std::string key;  // node_type_key(node)
  std::vector<std::string> hosts;
};

// One shape from every node's type; unlike nodes are an error listing the odd ones, unless
// `allow_mixed` (then the first node's type stands for all).
Result<ClusterShape> cluster_shape(const std::vector<NodeType>& types, const std::vector<std::string>& hosts,
                                   bool allow_mixed);

}  // namespace nccltune
