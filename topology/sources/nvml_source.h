// NVML adapter: GPU names, PCI addresses, NVLink peers, NVLink-C2C links to the CPU, CPU
// affinity, framebuffer and BAR1 totals, NVLink fabric registration, read through
// dlopen("libnvidia-ml.so.1") with the few prototypes declared here, so one binary runs on nodes with and without the NVIDIA driver.
#pragma once

#include <string>

#include "base/result.h"
#include "topology/nvml_facts.h"

namespace nccltune {

// An error when the library is absent or NVML cannot start: callers then leave the fields
// NVML would have given null, and say why.
Result<NvmlFacts> read_nvml_live(const std::string& library = "libnvidia-ml.so.1");

}  // namespace nccltune
