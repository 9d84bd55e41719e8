// A stand-in for libcudart.so with the two runtime entry points NCCL's Inspector profiler plugin
// calls (cudaGetDevice, cudaGetErrorString), answered by the fake driver: the device of the
// calling thread's current context in libfakecuda.so. Built as cudart/libcudart.so, so that
// Inspector links and runs against it on a machine with no GPU (tests/integration's Inspector
// test); nothing else loads it.
#include <dlfcn.h>

#include "fakecuda_hooks.h"

namespace {

// cudaError_t's values for what the stand-in answers (driver_types.h).
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorInvalidValue = 1;
constexpr int kCudaErrorNoDevice = 100;

fakecuda_current_device_fn current_device() {
  void* loaded = dlopen(kFakeCudaSoname, RTLD_NOW | RTLD_NOLOAD);
  void* address = loaded ? dlsym(loaded, "fakecuda_current_device") : dlsym(RTLD_DEFAULT, "fakecuda_current_device");
  if (loaded) dlclose(loaded);  // the process's own handle keeps it loaded
  return reinterpret_cast<fakecuda_current_device_fn>(address);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int cudaGetDevice(int* device) {
  if (device == nullptr) return kCudaErrorInvalidValue;
  const fakecuda_current_device_fn find = current_device();
  const int current = find ? find() : -1;
  if (current < 0) return kCudaErrorNoDevice;
  *device = current;
  return kCudaSuccess;
}

extern "C" __attribute__((visibility("default"))) const char* cudaGetErrorString(int error) {
  switch (error) {
    case kCudaSuccess: return "no error";
    case kCudaErrorInvalidValue: return "invalid argument";
    case kCudaErrorNoDevice: return "no CUDA-capable device is detected (libfakecuda.so has no current context)";
    default: return "unrecognized error code";
  }
}
