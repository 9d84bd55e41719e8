#include "collectives/cuda_driver.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "collectives/shared_library.h"

namespace nccltune {

using namespace cuda_abi;

struct LoadedCudaDriver {
  SharedLibrary library;
  CudaApi api;
};

namespace {

// Binds every entry of the table; the first missing symbol is the error.
std::optional<Error> bind_api(const SharedLibrary& library, CudaApi& api) {
  std::optional<Error> error;
  auto bind = [&](auto& function, std::initializer_list<const char*> names) {
    if (error) return;
    Status bound = library.bind(function, names);
    if (!bound) error = Error{bound.error()};
  };
  bind(api.cuInit, {"cuInit"});
  bind(api.cuDriverGetVersion, {"cuDriverGetVersion"});
  bind(api.cuDeviceGetCount, {"cuDeviceGetCount"});
  bind(api.cuDeviceGet, {"cuDeviceGet"});
  bind(api.cuDeviceGetName, {"cuDeviceGetName"});
  bind(api.cuDeviceGetPCIBusId, {"cuDeviceGetPCIBusId"});
  bind(api.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
  bind(api.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  bind(api.cuDevicePrimaryCtxRelease_v2, {"cuDevicePrimaryCtxRelease_v2"});
  bind(api.cuCtxSetCurrent, {"cuCtxSetCurrent"});
  bind(api.cuMemAlloc_v2, {"cuMemAlloc_v2"});
  bind(api.cuMemFree_v2, {"cuMemFree_v2"});
  bind(api.cuMemcpyHtoD_v2, {"cuMemcpyHtoD_v2"});
  bind(api.cuMemcpyDtoH_v2, {"cuMemcpyDtoH_v2"});
  bind(api.cuMemsetD8_v2, {"cuMemsetD8_v2"});
  bind(api.cuStreamCreate, {"cuStreamCreate"});
  bind(api.cuStreamSynchronize, {"cuStreamSynchronize"});
  bind(api.cuStreamDestroy_v2, {"cuStreamDestroy_v2"});
  bind(api.cuEventCreate, {"cuEventCreate"});
  bind(api.cuEventRecord, {"cuEventRecord"});
  bind(api.cuEventSynchronize, {"cuEventSynchronize"});
  // CUDA 12.8 added the _v2 name; older drivers export only the first one.
  bind(api.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  bind(api.cuEventDestroy_v2, {"cuEventDestroy_v2"});
  bind(api.cuGetErrorString, {"cuGetErrorString"});
  return error;
}

}  // namespace

Result<CudaDriver> CudaDriver::load(const std::string& path) {
  Result<SharedLibrary> library = SharedLibrary::open(path, "the CUDA driver library");
  if (!library) return Error{library.error()};
  auto loaded = std::make_shared<LoadedCudaDriver>(LoadedCudaDriver{std::move(*library), {}});
  if (std::optional<Error> error = bind_api(loaded->library, loaded->api)) return *error;
  CudaDriver driver(std::move(loaded));
  Status initialized = driver.check(driver.api().cuInit(0), "cuInit");
  if (!initialized) return Error{path + ": " + initialized.error()};
  return driver;
}

const std::string& CudaDriver::path() const {
  return loaded_->library.path();
}

const CudaApi& CudaDriver::api() const {
  return loaded_->api;
}

Status CudaDriver::check(CUresult result, std::string_view call) const {
  if (result == CUDA_SUCCESS) return Ok{};
  const char* text = nullptr;
  if (api().cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown CUDA error";
  return Error{std::string(call) + ": " + text + " (CUresult " + std::to_string(static_cast<int>(result)) +
               ")"};
}

Result<int> CudaDriver::driver_version() const {
  int version = 0;
  Status status = check(api().cuDriverGetVersion(&version), "cuDriverGetVersion");
  if (!status) return Error{status.error()};
  return version;
}

Result<int> CudaDriver::device_count() const {
  int count = 0;
  Status status = check(api().cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (!status) return Error{status.error()};
  return count;
}

Result<CudaDeviceInfo> CudaDriver::device_info(int ordinal) const {
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  CUdevice device = 0;
  char name[256] = {};
  char bus_id[64] = {};
  int major = 0;
  int minor = 0;
  Status status = check(api().cuDeviceGet(&device, ordinal), "cuDeviceGet");
  if (status) status = check(api().cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  if (status) status = check(api().cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device), "cuDeviceGetPCIBusId");
  if (status)
    status = check(api().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                   "cuDeviceGetAttribute");
  if (status)
    status = check(api().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
                   "cuDeviceGetAttribute");
  if (!status) return Error{"device " + std::to_string(ordinal) + ": " + status.error()};
  info.name = name;
  info.pci_bus_id = bus_id;
  info.sm = major * 10 + minor;
  return info;
}

Result<CudaContext> CudaDriver::use_device(int ordinal) const {
  CUdevice device = 0;
  Status status = check(api().cuDeviceGet(&device, ordinal), "cuDeviceGet");
  if (!status) return Error{status.error()};
  CUcontext context = nullptr;
  status = check(api().cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  if (!status) return Error{status.error()};
  CudaContext owner(loaded_, device);
  status = check(api().cuCtxSetCurrent(context), "cuCtxSetCurrent");
  if (!status) return Error{status.error()};
  return owner;
}

Result<DeviceBuffer> CudaDriver::allocate(std::size_t bytes) const {
  CUdeviceptr pointer = 0;
  Status status =
      check(api().cuMemAlloc_v2(&pointer, bytes), "cuMemAlloc_v2(" + std::to_string(bytes) + " bytes)");
  if (!status) return Error{status.error()};
  return DeviceBuffer(loaded_, pointer, bytes);
}

Result<CudaStream> CudaDriver::create_stream() const {
  CUstream stream = nullptr;
  Status status = check(api().cuStreamCreate(&stream, kStreamDefault), "cuStreamCreate");
  if (!status) return Error{status.error()};
  return CudaStream(loaded_, stream);
}

Result<CudaEvent> CudaDriver::create_event() const {
  CUevent event = nullptr;
  Status status = check(api().cuEventCreate(&event, kEventDefault), "cuEventCreate");
  if (!status) return Error{status.error()};
  return CudaEvent(loaded_, event);
}

Status CudaDriver::copy_to_device(const DeviceBuffer& destination, std::size_t offset, const void* source,
                                  std::size_t bytes) const {
  return check(api().cuMemcpyHtoD_v2(destination.pointer() + offset, source, bytes), "cuMemcpyHtoD_v2");
}

Status CudaDriver::copy_to_host(void* destination, const DeviceBuffer& source, std::size_t offset,
                                std::size_t bytes) const {
  return check(api().cuMemcpyDtoH_v2(destination, source.pointer() + offset, bytes), "cuMemcpyDtoH_v2");
}

Status CudaDriver::fill_bytes(const DeviceBuffer& destination, std::size_t bytes, unsigned char value) const {
  return check(api().cuMemsetD8_v2(destination.pointer(), value, std::min(bytes, destination.bytes())),
               "cuMemsetD8_v2");
}

Status CudaDriver::record(const CudaEvent& event, const CudaStream& stream) const {
  return check(api().cuEventRecord(event.get(), stream.get()), "cuEventRecord");
}

Status CudaDriver::synchronize(const CudaStream& stream) const {
  return check(api().cuStreamSynchronize(stream.get()), "cuStreamSynchronize");
}

Status CudaDriver::synchronize(const CudaEvent& event) const {
  return check(api().cuEventSynchronize(event.get()), "cuEventSynchronize");
}

Result<float> CudaDriver::elapsed_ms(const CudaEvent& start, const CudaEvent& end) const {
  float milliseconds = 0;
  Status status =
      check(api().cuEventElapsedTime(&milliseconds, start.get(), end.get()), "cuEventElapsedTime");
  if (!status) return Error{status.error()};
  return milliseconds;
}

CudaContext::CudaContext(CudaContext&& other) noexcept
    : driver_(std::move(other.driver_)), device_(other.device_) {}

CudaContext::~CudaContext() {
  if (driver_) driver_->api.cuDevicePrimaryCtxRelease_v2(device_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : driver_(std::move(other.driver_)),
      pointer_(std::exchange(other.pointer_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer::~DeviceBuffer() {
  if (driver_ && pointer_ != 0) driver_->api.cuMemFree_v2(pointer_);
}

void* DeviceBuffer::data(std::size_t offset) const {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(pointer_ + offset));
}

CudaStream::CudaStream(CudaStream&& other) noexcept
    : driver_(std::move(other.driver_)), stream_(std::exchange(other.stream_, nullptr)) {}

CudaStream::~CudaStream() {
  if (driver_ && stream_ != nullptr) driver_->api.cuStreamDestroy_v2(stream_);
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept
    : driver_(std::move(other.driver_)), event_(std::exchange(other.event_, nullptr)) {}

CudaEvent::~CudaEvent() {
  if (driver_ && event_ != nullptr) driver_->api.cuEventDestroy_v2(event_);
}

}  // namespace nccltune
