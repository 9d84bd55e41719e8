// NCCL 2.28's current tuner plugin ABI (plugin/tuner/tuner_v5.h, new in 2.28, exported as the
// symbol "ncclTunerPlugin_v5"), declared by the project. Frozen: never edit for a newer NCCL; add a
// header for the newer version instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/nccl_tuner_common.h"

namespace nccltune::nccl_abi {

// NOLINTBEGIN: C names, as in NCCL's headers
inline constexpr int kTunerV5HwLinks = 3;       // NCCL_NUM_HW_LINKS_V5
inline constexpr int kTunerV5CompCaps = 4;      // NCCL_NUM_COMPCAPS_V5
inline constexpr int kTunerV5TuningScales = 3;  // NCCL_NUM_TUNING_SCALES_V5

typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

// NCCL's latency and bandwidth model constants, which a v5 plugin may rewrite in init. nccltune
// leaves them alone: it marks measured choices in the cost table instead.
typedef struct {
  double baseLatencies[kNumAlgorithms][kNumProtocols];
  double hwLatencies[kTunerV5HwLinks][kNumAlgorithms][kNumProtocols];
  double llMaxBws[kTunerV5CompCaps][kTunerV5TuningScales];
  double perChMaxRingLL128Bws[kTunerV5CompCaps][kTunerV5TuningScales];
  double perChMaxTreeLL128Bws[kTunerV5CompCaps][kTunerV5TuningScales];
  double perChMaxTreeBws[kTunerV5CompCaps][kTunerV5TuningScales];
  double perChMaxNVLSTreeBws[kTunerV5CompCaps][kTunerV5TuningScales];
} ncclTunerConstants_v5_t;

typedef struct {
  const char* name;
  // Once per communicator: commId identifies it, nRanks / nNodes give its size.
  ncclResult_t (*init)(void** context, std::uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  // Once per collective: collCostTable holds numAlgo x numProto costs (see nccl_tuner_common.h);
  // nChannels comes in as 0 (NCCL's choice). A non-success result fails the collective (getAlgoInfo
  // NCCLCHECKs it, src/enqueue.cc 2.28.9), whatever NCCL's header comment promises.
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
} ncclTuner_v5_t;
// NOLINTEND

inline constexpr const char* kTunerV5Symbol = "ncclTunerPlugin_v5";

}  // namespace nccltune::nccl_abi
