// NCCL's tuner plugin ABI as the fake NCCL and its test plugins see it: the v7 (2.32.6), v6
// (2.30.3), v5 and v4 tables (src/include/plugin/tuner/tuner_v*.h), the logger type
// (src/include/nccl_common.h) and the cost table's indexes (src/include/plugin/nccl_tuner.h).
// The fake's own copy, written from NCCL's headers and not from the product's (tuner/plugin/), so
// that a mistake in the product's declarations shows up as a failing test instead of agreeing
// with itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/nccl_declarations.h"

namespace nccltune::fake::tuner_abi {

using nccl_abi::ncclResult_t;

// NOLINTBEGIN: C names, as in NCCL's headers
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                                  ...);

inline constexpr int kLogWarn = 2;  // NCCL_LOG_WARN
inline constexpr int kLogInfo = 3;  // NCCL_LOG_INFO

// ncclFunc_t
inline constexpr int kFuncBroadcast = 0;
inline constexpr int kFuncReduce = 1;
inline constexpr int kFuncAllGather = 2;
inline constexpr int kFuncReduceScatter = 3;
inline constexpr int kFuncAllReduce = 4;

// NCCL_ALGO_* and NCCL_PROTO_*: the rows and columns of the cost table, one contiguous
// float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] block passed as float**.
inline constexpr int kNumAlgorithms = 7;  // Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
inline constexpr int kNumProtocols = 3;   // LL, LL128, Simple
inline constexpr float kAlgoProtoIgnore = -1.0f;  // NCCL_ALGO_PROTO_IGNORE

typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

typedef struct {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
} ncclTunerConstants_v5_t;

typedef ncclResult_t (*getCollInfo_t)(void* context, int collType, size_t nBytes, int numPipeOps,
                                      float** collCostTable, int numAlgo, int numProto, int regBuff,
                                      int* nChannels);

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  getCollInfo_t getCollInfo;
  ncclResult_t (*finalize)(void* context);
} ncclTuner_v5_t;

// v6 (NCCL 2.30.3, src/include/plugin/tuner/tuner_v6.h): v5 and an optional getChunkSize.
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v5_t* constants);
  getCollInfo_t getCollInfo;
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, int collType, size_t nBytes, int algo, int proto, int nChannels,
                               size_t* chunkSize);
} ncclTuner_v6_t;

// The first NCCL that looks up ncclTunerPlugin_v6 (before v5).
inline constexpr int kFirstTunerV6Version = 23003;

// v7 (NCCL 2.32.6, src/include/plugin/tuner/tuner_v7.h): v6's entry points; the constants'
// bandwidth tables have 5 compute-capability rows (NCCL_NUM_COMPCAPS_V7) instead of 4.
typedef struct {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[5][3];
  double perChMaxRingLL128Bws[5][3];
  double perChMaxTreeLL128Bws[5][3];
  double perChMaxTreeBws[5][3];
  double perChMaxNVLSTreeBws[5][3];
} ncclTunerConstants_v7_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t* nvlDomainInfo,
                       ncclTunerConstants_v7_t* constants);
  getCollInfo_t getCollInfo;
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, int collType, size_t nBytes, int algo, int proto, int nChannels,
                               size_t* chunkSize);
} ncclTuner_v7_t;

// The first NCCL that looks up ncclTunerPlugin_v7 (before v6).
inline constexpr int kFirstTunerV7Version = 23206;

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  getCollInfo_t getCollInfo;
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v4_t;
// NOLINTEND

}  // namespace nccltune::fake::tuner_abi
