// NCCL's tuner plugin table v6, as NCCL 2.30.3 defines it (src/include/plugin/tuner/tuner_v6.h,
// looked up as ncclTunerPlugin_v6 before v5): v5's entry points, constants and NVLink domain
// info, and an optional getChunkSize (NULL: NCCL's own chunk size).
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/nccl_tuner_v5.h"

namespace nccltune::nccl_abi {

typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, std::uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t* nvlDomainInfo,
                       ncclTunerConstants_v6_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
  // After the algorithm, protocol and channels are chosen: the chunk size NCCL computed comes in
  // *chunkSize and may be changed (NCCL clamps it to what its buffers allow).
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                               int nChannels, size_t* chunkSize);
} ncclTuner_v6_t;

inline constexpr const char* kTunerV6Symbol = "ncclTunerPlugin_v6";

}  // namespace nccltune::nccl_abi
