// NCCL 2.28's previous tuner plugin ABI (plugin/tuner/tuner_v4.h, exported as the symbol
// "ncclTunerPlugin_v4"): what NCCL 2.24 to 2.27 load, and 2.28 when a plugin has no v5. Declared
// by the project; frozen.
#pragma once

#include <cstddef>

#include "plugin/nccl_tuner_common.h"

namespace nccltune::nccl_abi {

// NOLINTBEGIN: C names, as in NCCL's headers
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  // As in v5 (nccl_tuner_v5.h).
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v4_t;
// NOLINTEND

inline constexpr const char* kTunerV4Symbol = "ncclTunerPlugin_v4";

}  // namespace nccltune::nccl_abi
