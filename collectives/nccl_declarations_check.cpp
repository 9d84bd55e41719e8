// Compile-time check that the project's own declarations (nccl_declarations.h,
// cuda_declarations.h) match the real nccl.h and cuda.h: sizes, enum values and every function
// type. Built only where the headers are installed (NCCLTUNE_HAVE_NCCL_H); it defines nothing.
#if NCCLTUNE_HAVE_NCCL_H

#include <nccl.h>

#include <type_traits>

#include "collectives/cuda_declarations.h"
#include "collectives/nccl_declarations.h"

#if __has_include(<cuda.h>)
#include <cuda.h>
#define NCCLTUNE_CHECK_CUDA_H 1
#endif

namespace nccltune::declarations_check {

// Rewrites a type from the real headers into the project's: the header's enums and structs
// become the project's, pointers, const and function types are rewritten part by part, and
// everything else (int, size_t, the shared handle structs) stays as it is.
template <class T>
struct Project {
  using type = T;
};
template <class T>
using project_t = typename Project<T>::type;
template <class T>
struct Project<T*> {
  using type = project_t<T>*;
};
template <class T>
struct Project<const T> {
  using type = const project_t<T>;
};
template <class R, class... Args>
struct Project<R(Args...)> {
  using type = project_t<R> (*)(project_t<Args>...);
};
template <>
struct Project<::ncclResult_t> {
  using type = nccl_abi::ncclResult_t;
};
template <>
struct Project<::ncclDataType_t> {
  using type = nccl_abi::ncclDataType_t;
};
template <>
struct Project<::ncclRedOp_t> {
  using type = nccl_abi::ncclRedOp_t;
};
template <>
struct Project<::ncclUniqueId> {
  using type = nccl_abi::ncclUniqueId;
};
template <>
struct Project<::ncclConfig_t> {
  using type = nccl_abi::ncclConfig_t;
};

template <class Theirs, class Ours>
constexpr bool same_enum = sizeof(Theirs) == sizeof(Ours) &&
                           std::is_same_v<std::underlying_type_t<Theirs>, std::underlying_type_t<Ours>>;

#define NCCLTUNE_SAME_FUNCTION(function, ours) \
  static_assert(std::is_same_v<project_t<decltype(::function)>, ours>, #function)
#define NCCLTUNE_SAME_VALUE(name, ns) \
  static_assert(static_cast<long long>(::name) == static_cast<long long>(ns::name), #name)

static_assert(sizeof(::ncclUniqueId) == sizeof(nccl_abi::ncclUniqueId));
static_assert(NCCL_UNIQUE_ID_BYTES == nccl_abi::kUniqueIdBytes);
static_assert(same_enum<::ncclResult_t, nccl_abi::ncclResult_t>);
static_assert(same_enum<::ncclDataType_t, nccl_abi::ncclDataType_t>);
static_assert(same_enum<::ncclRedOp_t, nccl_abi::ncclRedOp_t>);
static_assert(std::is_same_v<::ncclComm_t, nccl_abi::ncclComm_t>);
static_assert(std::is_same_v<::cudaStream_t, nccl_abi::cudaStream_t>);
static_assert(NCCL_SPLIT_NOCOLOR == nccl_abi::kSplitNoColor);

NCCLTUNE_SAME_VALUE(ncclSuccess, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclUnhandledCudaError, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclSystemError, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInternalError, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInvalidArgument, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInvalidUsage, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclRemoteError, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInProgress, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclNumResults, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclSum, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclProd, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclMax, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclMin, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclAvg, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclNumOps, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclMaxRedOp, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInt8, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclUint8, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInt32, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclUint32, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclInt64, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclUint64, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclHalf, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclFloat, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclDouble, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclBfloat16, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclFloat8e4m3, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclFloat8e5m2, nccl_abi);
NCCLTUNE_SAME_VALUE(ncclNumTypes, nccl_abi);

NCCLTUNE_SAME_FUNCTION(ncclGetVersion, nccl_abi::ncclGetVersion_fn);
NCCLTUNE_SAME_FUNCTION(ncclGetUniqueId, nccl_abi::ncclGetUniqueId_fn);
NCCLTUNE_SAME_FUNCTION(ncclCommInitRank, nccl_abi::ncclCommInitRank_fn);
NCCLTUNE_SAME_FUNCTION(ncclCommSplit, nccl_abi::ncclCommSplit_fn);
NCCLTUNE_SAME_FUNCTION(ncclCommDestroy, nccl_abi::ncclCommDestroy_fn);
NCCLTUNE_SAME_FUNCTION(ncclCommAbort, nccl_abi::ncclCommAbort_fn);
NCCLTUNE_SAME_FUNCTION(ncclCommGetAsyncError, nccl_abi::ncclCommGetAsyncError_fn);
NCCLTUNE_SAME_FUNCTION(ncclGetErrorString, nccl_abi::ncclGetErrorString_fn);
NCCLTUNE_SAME_FUNCTION(ncclAllReduce, nccl_abi::ncclAllReduce_fn);
NCCLTUNE_SAME_FUNCTION(ncclAllGather, nccl_abi::ncclAllGather_fn);
NCCLTUNE_SAME_FUNCTION(ncclReduceScatter, nccl_abi::ncclReduceScatter_fn);
NCCLTUNE_SAME_FUNCTION(ncclBroadcast, nccl_abi::ncclBroadcast_fn);
NCCLTUNE_SAME_FUNCTION(ncclReduce, nccl_abi::ncclReduce_fn);
NCCLTUNE_SAME_FUNCTION(ncclSend, nccl_abi::ncclSend_fn);
NCCLTUNE_SAME_FUNCTION(ncclRecv, nccl_abi::ncclRecv_fn);
NCCLTUNE_SAME_FUNCTION(ncclGroupStart, nccl_abi::ncclGroupStart_fn);
NCCLTUNE_SAME_FUNCTION(ncclGroupEnd, nccl_abi::ncclGroupEnd_fn);

#if NCCLTUNE_CHECK_CUDA_H
template <>
struct Project<::CUresult> {
  using type = cuda_abi::CUresult;
};
template <>
struct Project<::CUdevice_attribute> {
  using type = cuda_abi::CUdevice_attribute;
};

static_assert(same_enum<::CUresult, cuda_abi::CUresult>);
static_assert(same_enum<::CUdevice_attribute, cuda_abi::CUdevice_attribute>);
static_assert(std::is_same_v<::CUdevice, cuda_abi::CUdevice>);
static_assert(std::is_same_v<::CUdeviceptr, cuda_abi::CUdeviceptr>);
static_assert(std::is_same_v<::CUcontext, cuda_abi::CUcontext>);
static_assert(std::is_same_v<::CUstream, cuda_abi::CUstream>);
static_assert(std::is_same_v<::CUevent, cuda_abi::CUevent>);
static_assert(::CU_STREAM_DEFAULT == cuda_abi::kStreamDefault);
static_assert(::CU_STREAM_NON_BLOCKING == cuda_abi::kStreamNonBlocking);
static_assert(::CU_EVENT_DEFAULT == cuda_abi::kEventDefault);

NCCLTUNE_SAME_VALUE(CUDA_SUCCESS, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_INVALID_VALUE, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_DEINITIALIZED, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_NO_DEVICE, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_INVALID_HANDLE, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_NOT_FOUND, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_NOT_READY, cuda_abi);
NCCLTUNE_SAME_VALUE(CUDA_ERROR_UNKNOWN, cuda_abi);
NCCLTUNE_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cuda_abi);
NCCLTUNE_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cuda_abi);

// cuda.h maps the plain names to the exported versioned ones (cuMemAlloc -> cuMemAlloc_v2), so
// each line checks the prototype of the symbol that CudaDriver looks up.
NCCLTUNE_SAME_FUNCTION(cuInit, cuda_abi::cuInit_fn);
NCCLTUNE_SAME_FUNCTION(cuDriverGetVersion, cuda_abi::cuDriverGetVersion_fn);
NCCLTUNE_SAME_FUNCTION(cuDeviceGetCount, cuda_abi::cuDeviceGetCount_fn);
NCCLTUNE_SAME_FUNCTION(cuDeviceGet, cuda_abi::cuDeviceGet_fn);
NCCLTUNE_SAME_FUNCTION(cuDeviceGetName, cuda_abi::cuDeviceGetName_fn);
NCCLTUNE_SAME_FUNCTION(cuDeviceGetPCIBusId, cuda_abi::cuDeviceGetPCIBusId_fn);
NCCLTUNE_SAME_FUNCTION(cuDeviceGetAttribute, cuda_abi::cuDeviceGetAttribute_fn);
NCCLTUNE_SAME_FUNCTION(cuDevicePrimaryCtxRetain, cuda_abi::cuDevicePrimaryCtxRetain_fn);
NCCLTUNE_SAME_FUNCTION(cuDevicePrimaryCtxRelease_v2, cuda_abi::cuDevicePrimaryCtxRelease_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuCtxSetCurrent, cuda_abi::cuCtxSetCurrent_fn);
NCCLTUNE_SAME_FUNCTION(cuMemAlloc_v2, cuda_abi::cuMemAlloc_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuMemFree_v2, cuda_abi::cuMemFree_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuMemcpyHtoD_v2, cuda_abi::cuMemcpyHtoD_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuMemcpyDtoH_v2, cuda_abi::cuMemcpyDtoH_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuMemsetD8_v2, cuda_abi::cuMemsetD8_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuStreamCreate, cuda_abi::cuStreamCreate_fn);
NCCLTUNE_SAME_FUNCTION(cuStreamSynchronize, cuda_abi::cuStreamSynchronize_fn);
NCCLTUNE_SAME_FUNCTION(cuStreamDestroy_v2, cuda_abi::cuStreamDestroy_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuEventCreate, cuda_abi::cuEventCreate_fn);
NCCLTUNE_SAME_FUNCTION(cuEventRecord, cuda_abi::cuEventRecord_fn);
NCCLTUNE_SAME_FUNCTION(cuEventSynchronize, cuda_abi::cuEventSynchronize_fn);
NCCLTUNE_SAME_FUNCTION(cuEventElapsedTime, cuda_abi::cuEventElapsedTime_fn);
NCCLTUNE_SAME_FUNCTION(cuEventDestroy_v2, cuda_abi::cuEventDestroy_v2_fn);
NCCLTUNE_SAME_FUNCTION(cuGetErrorString, cuda_abi::cuGetErrorString_fn);
#endif

#undef NCCLTUNE_SAME_FUNCTION
#undef NCCLTUNE_SAME_VALUE

}  // namespace nccltune::declarations_check

#endif  // NCCLTUNE_HAVE_NCCL_H
