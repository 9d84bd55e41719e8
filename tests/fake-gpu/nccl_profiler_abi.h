// NCCL's profiler plugin ABI as the fake NCCL and its test plugin see it: the v5 table (NCCL 2.28
// and later, src/include/plugin/profiler/profiler_v5.h), the v6 table (2.29.2 and later,
// profiler_v6.h: v5's descriptor with the copy-engine members added to its union), the event
// types and states (src/include/plugin/nccl_profiler.h). Written from NCCL's headers, as
// nccl_tuner_abi.h is, so that the fake and a plugin agree only where NCCL's ABI says they must.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "nccl_tuner_abi.h"

namespace nccltune::fake::profiler_abi {

using nccl_abi::ncclResult_t;
using tuner_abi::ncclDebugLogger_t;

// NOLINTBEGIN: C names, as in NCCL's headers
// Event types (ncclProfile*), the bits of the activation mask a plugin's init sets.
inline constexpr int kProfileGroup = 1 << 0;
inline constexpr int kProfileColl = 1 << 1;
inline constexpr int kProfileP2p = 1 << 2;
inline constexpr int kProfileProxyOp = 1 << 3;
inline constexpr int kProfileProxyStep = 1 << 4;
inline constexpr int kProfileProxyCtrl = 1 << 5;
inline constexpr int kProfileKernelCh = 1 << 6;
inline constexpr int kProfileNetPlugin = 1 << 7;
inline constexpr int kProfileGroupApi = 1 << 8;
inline constexpr int kProfileCollApi = 1 << 9;
inline constexpr int kProfileP2pApi = 1 << 10;
inline constexpr int kProfileKernelLaunch = 1 << 11;

// ncclProfilerEventState_t: the one state the fake records.
inline constexpr int kProfilerKernelChStop = 22;

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;  // the GPU's globaltimer, nanoseconds
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
    // v6 only: the copy-engine collective, the largest member of v6's union.
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
  };
} ncclProfilerEventDescr_v6_t;

// v5's descriptor is v6's without the copy-engine members: every member the fake fills sits at
// the same offset in both, so the fake hands either table a v6 descriptor.
typedef ncclProfilerEventDescr_v6_t ncclProfilerEventDescr_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} ncclProfilerEventStateArgs_v5_t;

// ncclProfiler_v5_t and ncclProfiler_v6_t have the same members; only the descriptor differs.
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, int eState, ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;
typedef ncclProfiler_v5_t ncclProfiler_v6_t;
// NOLINTEND

// The first NCCL that looks for ncclProfiler_v6 before ncclProfiler_v5 (src/plugin/profiler.cc).
inline constexpr int kFirstProfilerV6Version = 22902;

}  // namespace nccltune::fake::profiler_abi
