// NCCL's tuner plugin table v7, new in NCCL 2.32.6 (src/include/plugin/tuner/tuner_v7.h, looked up
// as ncclTunerPlugin_v7 before v6 by src/plugin/tuner.cc), declared by the project. Frozen: a newer
// NCCL gets a header of its own. The entry points are v6's; what changed is the constants init may
// rewrite, whose bandwidth tables gained a fifth compute-capability row (NCCL_NUM_COMPCAPS_V7, for
// Rubin). A v6 table handed v7 constants, or the reverse, would read past them: hence a version.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/nccl_tuner_v6.h"

namespace nccltune::nccl_abi {

// NOLINTBEGIN: C names, as in NCCL's headers
inline constexpr int kTunerV7CompCaps = 5;  // NCCL_NUM_COMPCAPS_V7; links and scales stay v5's

typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v7_t;

// v5's fields in v5's order; only the compute-capability dimension grew. nccltune leaves them
// alone (it marks measured cells in the cost table instead).
typedef struct {
  double baseLatencies[kNumAlgorithms][kNumProtocols];
  double hwLatencies[kTunerV5HwLinks][kNumAlgorithms][kNumProtocols];
  double llMaxBws[kTunerV7CompCaps][kTunerV5TuningScales];
  double perChMaxRingLL128Bws[kTunerV7CompCaps][kTunerV5TuningScales];
  double perChMaxTreeLL128Bws[kTunerV7CompCaps][kTunerV5TuningScales];
  double perChMaxTreeBws[kTunerV7CompCaps][kTunerV5TuningScales];
  double perChMaxNVLSTreeBws[kTunerV7CompCaps][kTunerV5TuningScales];
} ncclTunerConstants_v7_t;

// As v6 (nccl_tuner_v6.h), with v7's constants.
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, std::uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v7_t* nvlDomainInfo,
                       ncclTunerConstants_v7_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                               int nChannels, size_t* chunkSize);
} ncclTuner_v7_t;
// NOLINTEND

// 7 doubles x 3 + 3 x 7 x 3 + 5 tables of 5 x 3: the layout NCCL 2.32.6 writes into.
static_assert(sizeof(ncclTunerConstants_v7_t) == sizeof(double) * (7 * 3 + 3 * 7 * 3 + 5 * 5 * 3));
static_assert(sizeof(ncclTunerConstants_v5_t) == sizeof(double) * (7 * 3 + 3 * 7 * 3 + 5 * 4 * 3));

inline constexpr const char* kTunerV7Symbol = "ncclTunerPlugin_v7";

}  // namespace nccltune::nccl_abi
