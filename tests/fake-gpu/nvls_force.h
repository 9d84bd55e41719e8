// NCCL_NVLS_ENABLE=1 (FIDELITY.md F33): NCCL takes NVLS support as given without asking the GPU
// (ncclNvlsInit, src/transport/nvls.cc: only 2, the default, queries
// CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED), then sets up multicast memory with CUCHECK'ed driver
// calls. Where there is no multicast, the first of them fails, and init with it:
// "Cuda failure 801 'operation not supported'", ncclUnhandledCudaError.
#pragma once

#include <optional>
#include <string>

#include "comm_model.h"
#include "fake_model.h"
#include "nccl_env.h"

namespace nccltune::fake {

// Whether the node has NVLS multicast: `nccl_log.nvls`, by default whether the model has NVLS or
// NVLSTree.
bool multicast_supported(const FakeModel& model);

// NCCL's WARN line when NCCL_NVLS_ENABLE forces NVLS (a value other than 0 and 2) on GPUs without
// multicast, for a communicator with enough GPUs on each node for NVLS (2, 3 before 2.28.7):
// init fails then, with ncclUnhandledCudaError. nullopt otherwise.
std::optional<std::string> forced_nvls_failure(const FakeModel& model, const NcclEnv& env, const CommNodes& nodes,
                                               int nranks);

}  // namespace nccltune::fake
