// GPU facts as NVML reports them, and their YAML form (a snapshot's nvml.yaml), so the live
// read and a replay feed the same merge.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "topology/fabric.h"

namespace nccltune {

struct NvlinkPeer {
  std::string pci;           // remote end's PCI address
  std::string kind = "gpu";  // "gpu" or "nvswitch"
  int links = 0;             // active links to that peer
};

struct NvmlGpu {
  int index = 0;
  std::string name;
  std::string pci;  // normalized "0000:18:00.0"
  std::optional<int> sm;
  std::optional<std::string> cpu_affinity;
  std::vector<NvlinkPeer> nvlink_peers;
  // NVLink-C2C to the GPU's own CPU (Grace), read as NCCL reads it (see nvml_source.cpp):
  // the active C2C links (0: known none; null: NVML could not say) and the bandwidth NVML
  // gives per active link, in MB/s. nvml.yaml: `c2c: {links: 5, bw_mbps: 44712}`.
  std::optional<int> c2c_links;
  std::optional<int> c2c_bw_mbps;
  // nvmlDeviceGetMemoryInfo's total and nvmlDeviceGetBAR1MemoryInfo's bar1Total, in bytes; null
  // where NVML does not say (BAR1 on Grace superchips, an older nvml.yaml).
  // nvml.yaml: `memory_bytes: 85520809984`, `bar1_bytes: 137438953472`.
  std::optional<std::uint64_t> memory_bytes, bar1_bytes;
  // nvmlDeviceGetGpuFabricInfoV: state not_supported where the GPU has no fabric (or the driver no
  // such call); null in files written before the fabric was read. nvml.yaml: `fabric: {state:
  // completed, status: "Success", cluster_uuid: "...", clique_id: 4026, health_mask: "0x1aa",
  // summary: healthy}`, every key but state optional.
  std::optional<GpuFabric> fabric;

  int nvlinks_total() const;
  int nvlinks_to_switches() const;
};

struct NvmlFacts {
  std::optional<std::string> driver_version;
  std::optional<int> cuda_driver_version;
  std::vector<NvmlGpu> gpus;
};

// NVLinks between two GPUs as nvidia-smi counts them: direct links, or, when both hang off
// NVSwitches, the links each has into the switch fabric (the smaller of the two).
int nvlinks_between(const NvmlGpu& a, const NvmlGpu& b);

Result<NvmlFacts> read_nvml_yaml(const std::filesystem::path& file);
std::string nvml_yaml(const NvmlFacts& facts);

}  // namespace nccltune
