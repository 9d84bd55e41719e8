// CudaDriver: the CUDA driver API functions nccltune uses, loaded with dlopen from libcuda.so.1
// or from the file --cuda-lib / NCCLTUNE_CUDA_LIB names (tests point it at libfakecuda.so).
// Buffers, streams and events are driver-API objects with RAII owners; no kernels are launched.
// CUDA error codes become one-line errors naming the call, here at the boundary.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"
#include "collectives/cuda_declarations.h"

namespace nccltune {

// The function table, by the names the driver exports.
struct CudaApi {
  cuda_abi::cuInit_fn cuInit = nullptr;
  cuda_abi::cuDriverGetVersion_fn cuDriverGetVersion = nullptr;
  cuda_abi::cuDeviceGetCount_fn cuDeviceGetCount = nullptr;
  cuda_abi::cuDeviceGet_fn cuDeviceGet = nullptr;
  cuda_abi::cuDeviceGetName_fn cuDeviceGetName = nullptr;
  cuda_abi::cuDeviceGetPCIBusId_fn cuDeviceGetPCIBusId = nullptr;
  cuda_abi::cuDeviceGetAttribute_fn cuDeviceGetAttribute = nullptr;
  cuda_abi::cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain = nullptr;
  cuda_abi::cuDevicePrimaryCtxRelease_v2_fn cuDevicePrimaryCtxRelease_v2 = nullptr;
  cuda_abi::cuCtxSetCurrent_fn cuCtxSetCurrent = nullptr;
  cuda_abi::cuMemAlloc_v2_fn cuMemAlloc_v2 = nullptr;
  cuda_abi::cuMemFree_v2_fn cuMemFree_v2 = nullptr;
  cuda_abi::cuMemcpyHtoD_v2_fn cuMemcpyHtoD_v2 = nullptr;
  cuda_abi::cuMemcpyDtoH_v2_fn cuMemcpyDtoH_v2 = nullptr;
  cuda_abi::cuMemsetD8_v2_fn cuMemsetD8_v2 = nullptr;
  cuda_abi::cuStreamCreate_fn cuStreamCreate = nullptr;
  cuda_abi::cuStreamSynchronize_fn cuStreamSynchronize = nullptr;
  cuda_abi::cuStreamDestroy_v2_fn cuStreamDestroy_v2 = nullptr;
  cuda_abi::cuEventCreate_fn cuEventCreate = nullptr;
  cuda_abi::cuEventRecord_fn cuEventRecord = nullptr;
  cuda_abi::cuEventSynchronize_fn cuEventSynchronize = nullptr;
  cuda_abi::cuEventElapsedTime_fn cuEventElapsedTime = nullptr;  // _v2 where exported
  cuda_abi::cuEventDestroy_v2_fn cuEventDestroy_v2 = nullptr;
  cuda_abi::cuGetErrorString_fn cuGetErrorString = nullptr;
};

struct LoadedCudaDriver;  // the library handle and its table, shared by every owner below

// What the driver says about one device.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "0000:18:00.0"
  int sm = 0;              // compute capability, major * 10 + minor
};

// The device's primary context, current on the thread that made it; released on destruction.
class CudaContext {
 public:
  CudaContext(std::shared_ptr<const LoadedCudaDriver> driver, cuda_abi::CUdevice device)
      : driver_(std::move(driver)), device_(device) {}
  CudaContext(CudaContext&& other) noexcept;
  CudaContext& operator=(CudaContext&&) = delete;
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext();

  cuda_abi::CUdevice device() const { return device_; }

 private:
  std::shared_ptr<const LoadedCudaDriver> driver_;
  cuda_abi::CUdevice device_ = 0;
};

// Device memory from cuMemAlloc, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer(std::shared_ptr<const LoadedCudaDriver> driver, cuda_abi::CUdeviceptr pointer,
               std::size_t bytes)
      : driver_(std::move(driver)), pointer_(pointer), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  cuda_abi::CUdeviceptr pointer() const { return pointer_; }
  // The address as NCCL takes it, `offset` bytes in.
  void* data(std::size_t offset = 0) const;
  std::size_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<const LoadedCudaDriver> driver_;
  cuda_abi::CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

// A stream from cuStreamCreate, destroyed on destruction.
class CudaStream {
 public:
  CudaStream(std::shared_ptr<const LoadedCudaDriver> driver, cuda_abi::CUstream stream)
      : driver_(std::move(driver)), stream_(stream) {}
  CudaStream(CudaStream&& other) noexcept;
  CudaStream& operator=(CudaStream&&) = delete;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream();

  cuda_abi::CUstream get() const { return stream_; }

 private:
  std::shared_ptr<const LoadedCudaDriver> driver_;
  cuda_abi::CUstream stream_ = nullptr;
};

// An event from cuEventCreate (timing enabled), destroyed on destruction.
class CudaEvent {
 public:
  CudaEvent(std::shared_ptr<const LoadedCudaDriver> driver, cuda_abi::CUevent event)
      : driver_(std::move(driver)), event_(event) {}
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent();

  cuda_abi::CUevent get() const { return event_; }

 private:
  std::shared_ptr<const LoadedCudaDriver> driver_;
  cuda_abi::CUevent event_ = nullptr;
};

class CudaDriver {
 public:
  static constexpr const char* kDefaultPath = "libcuda.so.1";

  // dlopen()s `path`, binds every function of CudaApi and calls cuInit(0).
  // Errors name the path and the missing symbol or the loader's message.
  static Result<CudaDriver> load(const std::string& path = kDefaultPath);

  const std::string& path() const;
  const CudaApi& api() const;

  // Success, or "<call>: <cuGetErrorString text> (CUresult <n>)".
  Status check(cuda_abi::CUresult result, std::string_view call) const;

  Result<int> driver_version() const;  // 13000 for CUDA 13.0
  Result<int> device_count() const;
  Result<CudaDeviceInfo> device_info(int ordinal) const;

  // Retains device `ordinal`'s primary context and makes it current on this thread.
  Result<CudaContext> use_device(int ordinal) const;
  Result<DeviceBuffer> allocate(std::size_t bytes) const;
  // A stream that synchronizes with the legacy default stream (CU_STREAM_DEFAULT), so the
  // driver's synchronous copies and memsets are ordered before the work queued on it after them.
  Result<CudaStream> create_stream() const;
  Result<CudaEvent> create_event() const;

  Status copy_to_device(const DeviceBuffer& destination, std::size_t offset, const void* source,
                        std::size_t bytes) const;
  Status copy_to_host(void* destination, const DeviceBuffer& source, std::size_t offset,
                      std::size_t bytes) const;
  // Sets the first `bytes` bytes of `destination` to `value`.
  Status fill_bytes(const DeviceBuffer& destination, std::size_t bytes, unsigned char value) const;
  Status record(const CudaEvent& event, const CudaStream& stream) const;
  Status synchronize(const CudaStream& stream) const;
  Status synchronize(const CudaEvent& event) const;
  Result<float> elapsed_ms(const CudaEvent& start, const CudaEvent& end) const;

 private:
  explicit CudaDriver(std::shared_ptr<const LoadedCudaDriver> loaded) : loaded_(std::move(loaded)) {}

  std::shared_ptr<const LoadedCudaDriver> loaded_;
};

}  // namespace nccltune
