// Reads one node's topology from the live machine or a replayed source, and merges what each
// source knows into one NodeTopology that records which source gave each fact.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "topology/node_topology.h"
#include "topology/nvidia_smi_query.h"
#include "topology/nvml_facts.h"
#include "topology/sources/hwloc_source.h"
#include "topology/sources/sysfs_source.h"

namespace nccltune {

// `--from`: nothing (live), a snapshot directory, `nvidia-smi:FILE` (`nvidia-smi topo -m`),
// `nvidia-smi-q:FILE` (`nvidia-smi -q`) or `hwloc:FILE`.
struct TopologySource {
  enum class Kind { live, snapshot, nvidia_smi, nvidia_smi_query, hwloc };
  Kind kind = Kind::live;
  std::filesystem::path path;
};
Result<TopologySource> parse_topology_source(std::string_view from);

struct ReadOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::filesystem::path sys_root = "/sys";    // live reads only
  std::filesystem::path proc_root = "/proc";  // live reads only
  std::string nvidia_smi = "nvidia-smi";      // live fallback when NVML is absent
};

// What each source said; absent sources are nullopt. merge_topology is pure.
struct TopologyInputs {
  std::string host;
  std::optional<PciInventory> hwloc;
  std::optional<NvmlFacts> nvml;
  std::optional<NodeTopology> nvidia_smi;
  std::optional<NvidiaSmiQuery> nvidia_smi_query;
  const SysfsSource* sysfs = nullptr;
  std::optional<std::vector<RdmaDevice>> ibverbs;
  GpuDirectFacts gpudirect;
  std::vector<std::string> notes;
};
NodeTopology merge_topology(const TopologyInputs& inputs);

Result<NodeTopology> read_node_topology(const TopologySource& source, const ReadOptions& options);

// The output of `<program> <args>` (program found on PATH when not a path), e.g. {"topo", "-m"}
// or {"-q"}; nullopt when it is missing, fails or does not answer within 10 s (then it is killed,
// and `notes` says so). The child starts with an empty signal mask and default handlers: the
// daemon blocks SIGTERM/SIGINT/SIGHUP for its signalfd, and a child inheriting that could not be
// stopped.
std::optional<std::string> run_nvidia_smi(const std::string& program, const std::vector<std::string>& args,
                                          std::vector<std::string>& notes);

}  // namespace nccltune
