// NodeType: what a profile is for, per node: GPU model and count, NVLink/NVSwitch/MNNVL, NICs,
// GPU-NIC affinity, NCCL major.minor; and its stable key, the name of the store's directory.
// `tune` derives it from what its workers saw, nccltuned and `env` from the node alone
// (local_node_type); both give the same key for the same node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "topology/node_topology.h"

namespace nccltune {

struct NodeType {
  std::string gpu;  // "NVIDIA H100 80GB HBM3"
  int gpus = 0;     // per node
  int gpu_sm = 0;   // 90
  std::optional<bool> nvswitch;
  int nvlinks = 0;            // per GPU, 0 when none or unknown
  // Every GPU registered with one multi-node NVLink fabric (GB200/GB300 NVL72): COMPLETED with a
  // successful probe, one non-zero cluster UUID and one clique id, what NCCL needs for MNNVL.
  // False when a GPU is not, or the topology does not say.
  bool mnnvl = false;
  std::optional<int> nics;    // RDMA NICs; nullopt when the topology does not describe these GPUs
  std::string nic;            // "mlx5 InfiniBand 400 Gb/s", or "" without NICs
  bool nic_ethernet = false;  // RoCE rather than InfiniBand
  int nic_rate_gbps = 0;
  std::string gpu_nic_affinity;  // worst nearest-NIC link over the GPUs: "PIX", ..., or ""
  // NCCL can register GPU memory with the RDMA NICs (a peer-memory module or dma-buf,
  // topology/gpudirect.h), so NIC and GPU both support GPUDirect RDMA and NCCL_NET_GDR_* act
  // (ncclTopoCheckGdr, src/graph/paths.cc). nullopt: unknown, or no GPU or NIC in the topology. An
  // IOMMU or ACS in the way does not make it false: NCCL does not see them and keeps GDR on. Not
  // part of the key: a node whose nvidia_peermem is unloaded keeps its profiles.
  std::optional<bool> gdr;
  std::string nccl_version;      // "2.28.9"
  std::string cuda_driver;       // "13.0"

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

// "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28"; an MNNVL node says "mnnvl" where others say
// "nvswitch" or "nvlink<N>": "gb200.4gpu.mnnvl.4xib400.node.nccl2.28".
std::string node_type_key(const NodeType& type);

// The type of this node when no worker ran (nccltuned, `env`): only the topology names the GPUs,
// as `tune` falls back to when the topology shows them. `nccl_version` "2.28.9", `cuda_driver`
// "13.0", each empty when unknown.
NodeType local_node_type(const NodeTopology& topology, const std::string& nccl_version,
                         const std::string& cuda_driver);

// NodeType's one wire format, written by node.yaml's `node_type` (which adds `key`) and by each
// node to tune's rank 0: {gpu, gpus, gpu_sm, nvswitch, nvlinks, mnnvl, nics, nic, nic_ethernet,
// nic_rate_gbps, gpu_nic_affinity, gdr, nccl_version, cuda_driver}, unknown optionals as null, text
// made printable.
nlohmann::ordered_json node_type_to_json(const NodeType& type);
// Its reader, strict as every reader of outside text (base/strict_yaml.h): those keys and `key`,
// each optional (mnnvl false and gdr null when absent: written before they were); a bad value fails
// through yaml_fail naming `field`.`key`. JSON is YAML, so this
// reads what node_type_to_json wrote either way.
NodeType node_type_from_yaml(const YAML::Node& node, const std::string& field);
// The same from text (tune's wire: node_type_to_json dumped); errors name `origin`.
Result<NodeType> parse_node_type(std::string_view text, std::string_view origin);

}  // namespace nccltune
