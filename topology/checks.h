// Node health verdicts for ops (`nccltune check`, nccltuned): pure functions of a NodeTopology
// and what the admin expects of it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "topology/affinity.h"
#include "topology/link_type.h"
#include "topology/node_topology.h"

namespace nccltune {

enum class Verdict { pass, warn, fail };
// "pass", "warn", "fail": node.yaml, metrics and every reader of them. `check` prints them in
// capitals (check_render.h), as it always has.
std::string_view to_string(Verdict verdict);

struct Finding {
  std::string check;    // "gpu_nic_affinity", "pcie_link", "nic_port", ...
  std::string subject;  // "GPU2", "NIC5", "bridge 0000:17:00.0", "node"
  Verdict verdict = Verdict::pass;
  std::string message;
};

struct Recommendation {
  std::string name;   // "NCCL_IB_HCA"
  std::string value;  // "=mlx5_0,mlx5_1"
  std::string reason;
};

// `--expect FILE`: what this node type should have.
struct Expectation {
  std::optional<int> gpus;
  std::optional<int> nics;
  std::optional<double> nic_rate_gbps;
  std::optional<LinkKind> max_gpu_nic_link;
  // `max_gpu_nic_link: C2C`: PXB or nearer, or a NIC the GPU reaches over NVLink-C2C (NCCL's P2C,
  // which NCCL ranks after PXB and before PHB): the expectation of a Grace tray.
  bool gpu_nic_link_c2c = false;
  // The fleet survey's thresholds (`nccltune fleet` reads them from the same file): all_reduce
  // busbw below this % of the peak model warns; slower than `outlier` x the fleet's median is slow.
  std::optional<double> min_peak_pct;
  std::optional<double> outlier;
};
Result<Expectation> read_expectation(const std::filesystem::path& file);

// GPUDirect RDMA on a node with GPUs and RDMA NICs: ready when NCCL can register GPU memory with
// the NICs and nothing known stands in the way; blocked_by names the checks that found what does
// ("gdr_peer_memory", "gdr_iommu", "pcie_acs").
struct GdrStatus {
  bool ready = false;
  std::vector<std::string> blocked_by;
  friend bool operator==(const GdrStatus&, const GdrStatus&) = default;
};

struct CheckReport {
  std::vector<Finding> findings;
  std::vector<Recommendation> recommendations;
  std::vector<NicAssignment> assignments;
  std::optional<GdrStatus> gdr;  // null: no GPU or no RDMA NIC, or too little known to tell

  Verdict overall() const;
  int exit_code() const;  // 0 pass, 1 warnings only, 2 failures
  int count(Verdict verdict) const;
};

CheckReport check_node(const NodeTopology& topology, const Expectation& expectation);

}  // namespace nccltune
