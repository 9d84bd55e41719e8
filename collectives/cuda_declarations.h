// The part of the CUDA driver API (cuda.h) that nccltune uses, declared by the project so that
// the normal build needs no CUDA headers. Names and values are cuda.h's; the handle structs are
// cuda.h's own (global) tags, so handle types are identical to cuda.h's.
// nccl_declarations_check.cpp checks these against the real cuda.h when it is installed.
#pragma once

#include <cstddef>

struct CUctx_st;
struct CUstream_st;
struct CUevent_st;

namespace nccltune::cuda_abi {

// NOLINTBEGIN: C names, as in cuda.h
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
} CUdevice_attribute;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef ::CUctx_st* CUcontext;
typedef ::CUstream_st* CUstream;
typedef ::CUevent_st* CUevent;

inline constexpr unsigned int kStreamDefault = 0x0;      // CU_STREAM_DEFAULT
inline constexpr unsigned int kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING
inline constexpr unsigned int kEventDefault = 0x0;       // CU_EVENT_DEFAULT

// Function types, by the name the driver exports (cuda.h maps cuMemAlloc to cuMemAlloc_v2, ...).
using cuInit_fn = CUresult (*)(unsigned int flags);
using cuDriverGetVersion_fn = CUresult (*)(int* version);
using cuDeviceGetCount_fn = CUresult (*)(int* count);
using cuDeviceGet_fn = CUresult (*)(CUdevice* device, int ordinal);
using cuDeviceGetName_fn = CUresult (*)(char* name, int length, CUdevice device);
using cuDeviceGetPCIBusId_fn = CUresult (*)(char* bus_id, int length, CUdevice device);
using cuDeviceGetAttribute_fn = CUresult (*)(int* value, CUdevice_attribute attribute, CUdevice device);
using cuDevicePrimaryCtxRetain_fn = CUresult (*)(CUcontext* context, CUdevice device);
using cuDevicePrimaryCtxRelease_v2_fn = CUresult (*)(CUdevice device);
using cuCtxSetCurrent_fn = CUresult (*)(CUcontext context);
using cuMemAlloc_v2_fn = CUresult (*)(CUdeviceptr* pointer, size_t bytes);
using cuMemFree_v2_fn = CUresult (*)(CUdeviceptr pointer);
using cuMemcpyHtoD_v2_fn = CUresult (*)(CUdeviceptr destination, const void* source, size_t bytes);
using cuMemcpyDtoH_v2_fn = CUresult (*)(void* destination, CUdeviceptr source, size_t bytes);
using cuMemsetD8_v2_fn = CUresult (*)(CUdeviceptr destination, unsigned char value, size_t count);
using cuStreamCreate_fn = CUresult (*)(CUstream* stream, unsigned int flags);
using cuStreamSynchronize_fn = CUresult (*)(CUstream stream);
using cuStreamDestroy_v2_fn = CUresult (*)(CUstream stream);
using cuEventCreate_fn = CUresult (*)(CUevent* event, unsigned int flags);
using cuEventRecord_fn = CUresult (*)(CUevent event, CUstream stream);
using cuEventSynchronize_fn = CUresult (*)(CUevent event);
using cuEventElapsedTime_fn = CUresult (*)(float* milliseconds, CUevent start, CUevent end);
using cuEventDestroy_v2_fn = CUresult (*)(CUevent event);
using cuGetErrorString_fn = CUresult (*)(CUresult error, const char** text);
// NOLINTEND

}  // namespace nccltune::cuda_abi
