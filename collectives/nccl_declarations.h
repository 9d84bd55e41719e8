// The part of the NCCL API (nccl.h) that nccltune uses, declared by the project so that the
// normal build needs no NCCL or CUDA headers. Names and values are nccl.h's; the communicator and
// stream structs are nccl.h's own (global) tags, so those handle types are identical to nccl.h's.
// nccl_declarations_check.cpp checks these against the real nccl.h when it is installed.
#pragma once

#include <cstddef>

struct ncclComm;
struct CUstream_st;

namespace nccltune::nccl_abi {

inline constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES

// NOLINTBEGIN: C names, as in nccl.h
typedef struct {
  char internal[kUniqueIdBytes];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

typedef ::ncclComm* ncclComm_t;
typedef ::CUstream_st* cudaStream_t;

// nccl.h's ncclConfig_t, opaque: nccltune only passes NULL (a split then inherits its parent's
// configuration), so its version-dependent fields are not declared.
struct ncclConfig_t;

inline constexpr int kSplitNoColor = -1;  // NCCL_SPLIT_NOCOLOR

using ncclGetVersion_fn = ncclResult_t (*)(int* version);
using ncclGetUniqueId_fn = ncclResult_t (*)(ncclUniqueId* unique_id);
using ncclCommInitRank_fn = ncclResult_t (*)(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank);
// NCCL 2.18 and later.
using ncclCommSplit_fn = ncclResult_t (*)(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                          ncclConfig_t* config);
using ncclCommDestroy_fn = ncclResult_t (*)(ncclComm_t comm);
using ncclCommAbort_fn = ncclResult_t (*)(ncclComm_t comm);
using ncclCommGetAsyncError_fn = ncclResult_t (*)(ncclComm_t comm, ncclResult_t* async_error);
using ncclGetErrorString_fn = const char* (*)(ncclResult_t result);
using ncclAllReduce_fn = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream);
using ncclAllGather_fn = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
using ncclReduceScatter_fn = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t recvcount,
                                              ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                              cudaStream_t stream);
using ncclBroadcast_fn = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, int root, ncclComm_t comm,
                                          cudaStream_t stream);
using ncclReduce_fn = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                                       cudaStream_t stream);
using ncclSend_fn = ncclResult_t (*)(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                     ncclComm_t comm, cudaStream_t stream);
using ncclRecv_fn = ncclResult_t (*)(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                     ncclComm_t comm, cudaStream_t stream);
using ncclGroupStart_fn = ncclResult_t (*)();
using ncclGroupEnd_fn = ncclResult_t (*)();
// NOLINTEND

}  // namespace nccltune::nccl_abi
