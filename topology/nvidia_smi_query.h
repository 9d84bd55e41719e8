// Reader for the text of `nvidia-smi -q`: per GPU what `nvidia-smi topo -m` does not print, its
// PCI address, product name, framebuffer and BAR1 totals, PCIe link state and NVLink fabric. The offline source
// of those facts on a node without NVML, and what a bug report usually has pasted into it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "topology/fabric.h"
#include "topology/node_topology.h"

namespace nccltune {

struct NvidiaSmiQueryGpu {
  int index = 0;    // the position of its section: nvidia-smi's own GPU numbering
  std::string pci;  // normalized "0000:18:00.0", from the section's "GPU 00000000:18:00.0" line
  std::optional<std::string> name;                        // Product Name
  std::optional<std::uint64_t> memory_bytes, bar1_bytes;  // FB and BAR1 Memory Usage, Total
  PcieLink pcie;  // GPU Link Info: PCIe Generation and Link Width, Max and Current
  // The Fabric block: State, Status, CliqueId, ClusterUUID and the Health block's words encoded
  // as NVML's health mask (Bandwidth Full/Degraded, Route Recovery in progress, Route Unhealthy,
  // Access Timeout Recovery True/False, Incorrect Configuration None/...) and its Summary. Null
  // where the block is absent (drivers before R550) or its State is not known ("N/A", "Not
  // Supported": no fabric); health_mask null where no health field is known.
  std::optional<GpuFabric> fabric;
};

struct NvidiaSmiQuery {
  std::optional<std::string> driver_version;
  std::vector<NvidiaSmiQueryGpu> gpus;
};

// Parses the text of `nvidia-smi -q` (or `-a`). `origin` names the file for error messages.
//
// Lines before the "==============NVSMI LOG==============" banner (a shell prompt, comments) are
// skipped, as are lines it does not know, so whole captures, trimmed excerpts and captures of
// other drivers read alike. Blocks nest by indentation (spaces or tabs, any width); CRLF is read
// as LF and bytes that are not UTF-8 as '?'. A value nvidia-smi prints as a word ("N/A",
// "[N/A]", "[Not Supported]", "Unknown Error", "Insufficient Permissions") is unknown and stays
// null: Grace superchips print BAR1 as N/A. So is a size of 0. A value that starts like a number
// but is not one of the expected form ("24564 MiB", "5", "16x", a CliqueId), a ClusterUUID that is
// not a UUID, a section header whose bus id is
// not a PCI address, the same bus id twice, more than kMaxDevicesPerKind sections or no section
// at all (unless the text says "Attached GPUs : 0") is an error, one line: "origin:line: what".
Result<NvidiaSmiQuery> parse_nvidia_smi_query(std::string_view text, std::string_view origin);

}  // namespace nccltune
