// What libfakecuda.so exports beyond the CUDA driver API, for libfakenccl.so. The product
// dlopen()s both libraries by path with RTLD_LOCAL, so fakenccl finds these at communicator init
// with dlopen("libfakecuda.so", RTLD_NOLOAD) (the loader matches the soname of the copy already
// loaded, whatever path it came from) and dlsym, or through the global scope where a program
// linked or loaded fakecuda globally.
#pragma once

#include <cstddef>

#include "collectives/cuda_declarations.h"

extern "C" {

// Advances `stream`'s simulated clock by `us` microseconds (nullptr: the default stream).
// 0, or -1 when `stream` is not a live stream.
__attribute__((visibility("default"))) int fakecuda_advance_stream(nccltune::cuda_abi::CUstream stream,
                                                                   double us);
using fakecuda_advance_stream_fn = int (*)(nccltune::cuda_abi::CUstream, double);

// Reads `stream`'s simulated clock, in microseconds (nullptr: the default stream), into `us`.
// 0, or -1 when `stream` is not a live stream.
__attribute__((visibility("default"))) int fakecuda_stream_clock(nccltune::cuda_abi::CUstream stream,
                                                                 double* us);
using fakecuda_stream_clock_fn = int (*)(nccltune::cuda_abi::CUstream, double*);

// The device ordinal of the calling thread's current context, or -1 when there is none.
__attribute__((visibility("default"))) int fakecuda_current_device(void);
using fakecuda_current_device_fn = int (*)();

// 1 when [pointer, pointer + bytes) lies inside one live allocation of cuMemAlloc, else 0.
__attribute__((visibility("default"))) int fakecuda_is_device_range(const void* pointer, size_t bytes);
using fakecuda_is_device_range_fn = int (*)(const void*, size_t);

}  // extern "C"

inline constexpr const char* kFakeCudaSoname = "libfakecuda.so";
