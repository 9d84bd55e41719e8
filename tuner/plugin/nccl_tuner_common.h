// The types NCCL 2.28's tuner plugin ABI shares between its versions (nccl_common.h and
// plugin/nccl_tuner.h of NCCL 2.28.9), declared by the project: NCCL does not install its plugin
// headers. Frozen: these are NCCL 2.28's values, whatever later NCCLs do; a newer ABI gets new
// headers of its own. ncclResult_t comes from the project's nccl.h declarations.
#pragma once

#include <cstdint>

#include "collectives/nccl_declarations.h"

namespace nccltune::nccl_abi {

// NOLINTBEGIN: C names, as in NCCL's headers
typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

// Subsystem flags of a log line (NCCL_DEBUG_SUBSYS); only the ones the plugin uses.
typedef enum { NCCL_INIT = 0x1, NCCL_ENV = 0x80, NCCL_TUNING = 0x40 } ncclDebugLogSubSys;

// printf-style: the plugin always passes "%s" and its own text, never a format built from input.
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

typedef enum {
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4,
  ncclFuncSendRecv = 5,
  ncclFuncSend = 6,
  ncclFuncRecv = 7,
  ncclFuncAlltoAll = 8,
  ncclFuncScatter = 9,
  ncclFuncGather = 10,
  ncclNumFuncs = 11
} ncclFunc_t;
// NOLINTEND

// Rows and columns of the cost table NCCL 2.28 passes to getCollInfo (NCCL_ALGO_* and
// NCCL_PROTO_* of plugin/nccl_tuner.h). The table is one contiguous float[algorithms][protocols]
// block cast to float**, not an array of row pointers.
inline constexpr int kAlgoTree = 0;
inline constexpr int kAlgoRing = 1;
inline constexpr int kAlgoCollNetDirect = 2;
inline constexpr int kAlgoCollNetChain = 3;
inline constexpr int kAlgoNvls = 4;
inline constexpr int kAlgoNvlsTree = 5;
inline constexpr int kAlgoPat = 6;
inline constexpr int kNumAlgorithms = 7;

inline constexpr int kProtoLl = 0;
inline constexpr int kProtoLl128 = 1;
inline constexpr int kProtoSimple = 2;
inline constexpr int kNumProtocols = 3;

// A (algorithm, protocol) cell NCCL ruled out for this call (NCCL_ALGO_PROTO_IGNORE). NCCL picks
// the cell of lowest cost among the others.
inline constexpr float kAlgoProtoIgnore = -1.0f;

}  // namespace nccltune::nccl_abi
