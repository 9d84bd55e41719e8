// libfakecuda.so: the CUDA driver API functions nccltune uses, for machines without a GPU.
// Device memory is host memory; streams keep a simulated clock in microseconds that only the
// fake NCCL advances (by the model's time for each op), and events record that clock, so
// cuEventElapsedTime reports modeled times. Devices come from the model file
// (NCCLTUNE_FAKE_MODEL), cycled over the device ordinals; a missing or invalid model gives one
// default device here (ncclCommInitRank reports the model's error). The model is read once, at
// cuInit; its init_cost_ms.cuda_context is slept at the process's first context.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collectives/cuda_declarations.h"
#include "fake_model.h"
#include "fakecuda_hooks.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

using namespace nccltune::cuda_abi;

struct CUctx_st {
  int device = 0;
  int retains = 0;
};

struct CUstream_st {
  double clock_us = 0;
};

struct CUevent_st {
  double time_us = 0;
  bool recorded = false;
};

// LeakSanitizer's, in a sanitizer build; null elsewhere.
extern "C" void __lsan_ignore_object(const void* object) __attribute__((weak));

namespace {

constexpr int kDriverVersion = 13000;
constexpr std::size_t kAlignment = 256;

struct State {
  std::mutex mutex;
  bool initialized = false;
  std::vector<nccltune::fake::FakeDevice> devices{nccltune::fake::FakeDevice{}};
  int device_count = 1;
  int context_cost_ms = 0;                          // the model's init_cost_ms.cuda_context
  bool context_paid = false;                        // the first context of the process was created
  std::vector<std::unique_ptr<CUctx_st>> contexts;  // primary context per device
  std::map<std::uintptr_t, std::size_t> allocations;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  CUstream_st default_stream;
};

State& state() {
  static State* instance = [] {
    auto* created = new State;  // never destroyed: calls may come during exit
    // Nor a leak: once the product dlcloses this library, nothing LeakSanitizer can see points
    // to it.
    if (__lsan_ignore_object != nullptr) __lsan_ignore_object(created);
    return created;
  }();
  return *instance;
}

// initial-exec: dlopen places it in the static TLS surplus and no __tls_get_addr runs. GCC 12's
// LeakSanitizer misreads dynamically allocated TLS blocks under glibc 2.36 and crashes at exit
// ("Tracer caught signal 11"), failing every sanitized test that runs a worker.
__attribute__((tls_model("initial-exec"))) thread_local CUctx_st* current_context = nullptr;

const nccltune::fake::FakeDevice& device_of(const State& s, CUdevice device) {
  return s.devices[static_cast<std::size_t>(device) % s.devices.size()];
}

bool valid_device(const State& s, CUdevice device) {
  return device >= 0 && device < s.device_count;
}

bool inside_allocation(const State& s, std::uintptr_t address, std::size_t bytes) {
  auto above = s.allocations.upper_bound(address);
  if (above == s.allocations.begin()) return false;
  const auto& [start, size] = *std::prev(above);
  return address >= start && address - start <= size && bytes <= size - (address - start);
}

CUstream_st* stream_or_default(State& s, CUstream stream) {
  if (stream == nullptr) return &s.default_stream;
  return s.streams.contains(stream) ? stream : nullptr;
}

void load_devices(State& s) {
  const char* path = std::getenv("NCCLTUNE_FAKE_MODEL");
  if (path == nullptr) return;
  nccltune::Result<nccltune::fake::FakeModel> model = nccltune::fake::load_fake_model(path);
  if (!model) return;
  s.devices = model->devices;
  s.device_count = model->device_count;
  s.context_cost_ms = model->init_cost.cuda_context_ms;
}

}  // namespace

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) {
    load_devices(s);
    s.contexts.resize(static_cast<std::size_t>(s.device_count));
    s.initialized = true;
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = kDriverVersion;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = s.device_count;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(s, ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

// CUDA's CUuuid: 16 bytes naming one GPU.
struct CUuuid_st {
  char bytes[16];
};

// A GPU's UUID, stable per host and device: FNV-1a of the host's name, the emulated node of this
// process (NCCLTUNE_EMULATE_NODES under Open MPI or Slurm, so that emulated nodes on one machine
// have GPUs of their own) and the ordinal, spread over 16 bytes.
FAKE_EXPORT CUresult cuDeviceGetUuid(CUuuid_st* uuid, CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string key = std::string(host) + "/" + std::to_string(device);
  const char* emulate = std::getenv("NCCLTUNE_EMULATE_NODES");
  for (const auto& [rank, size] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                   std::pair{"SLURM_PROCID", "SLURM_NTASKS"}}) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (emulate != nullptr && r != nullptr && n != nullptr && std::atoi(emulate) > 0 && std::atoi(n) > 0) {
      key += "/node" + std::to_string(std::atoi(r) / std::max(1, std::atoi(n) / std::atoi(emulate)));
      break;
    }
  }
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (int half = 0; half < 2; ++half) {
    for (const char c : key) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    std::memcpy(uuid->bytes + 8 * half, &hash, 8);
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, static_cast<std::size_t>(length), "%s", device_of(s, device).name.c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (bus_id == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(bus_id, static_cast<std::size_t>(length), "%s", device_of(s, device).pci.c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = device_of(s, device).sm / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = device_of(s, device).sm % 10; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
  std::unique_ptr<CUctx_st>& primary = s.contexts[static_cast<std::size_t>(device)];
  if (!primary) {
    // A real driver's first context costs hundreds of milliseconds (init_cost_ms.cuda_context),
    // once per process.
    if (!s.context_paid && s.context_cost_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(s.context_cost_ms));
    s.context_paid = true;
    primary = std::make_unique<CUctx_st>(CUctx_st{device, 0});
  }
  ++primary->retains;
  *context = primary.get();
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
  std::unique_ptr<CUctx_st>& primary = s.contexts[static_cast<std::size_t>(device)];
  if (!primary || primary->retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --primary->retains;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  current_context = context;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* pointer, std::size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* memory = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto address = reinterpret_cast<std::uintptr_t>(memory);
  s.allocations[address] = bytes;
  *pointer = address;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (pointer == 0) return CUDA_SUCCESS;
  auto allocation = s.allocations.find(static_cast<std::uintptr_t>(pointer));
  if (allocation == s.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void*>(allocation->first));
  s.allocations.erase(allocation);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void* source, std::size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (source == nullptr || !inside_allocation(s, destination, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void* destination, CUdeviceptr source, std::size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (destination == nullptr || !inside_allocation(s, source, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr destination, unsigned char value, std::size_t count) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!inside_allocation(s, destination, count)) return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void*>(destination), value, count);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *stream = new CUstream_st;
  s.streams.insert(*stream);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return stream_or_default(s, stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (s.streams.erase(stream) == 0) return CUDA_ERROR_INVALID_HANDLE;
  delete stream;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *event = new CUevent_st;
  s.events.insert(*event);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  CUstream_st* target = stream_or_default(s, stream);
  if (!s.events.contains(event) || target == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  event->time_us = target->clock_us;
  event->recorded = true;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventSynchronize(CUevent event) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return s.events.contains(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuEventElapsedTime_v2(float* milliseconds, CUevent start, CUevent end) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (milliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!s.events.contains(start) || !s.events.contains(end) || !start->recorded || !end->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *milliseconds = static_cast<float>((end->time_us - start->time_us) / 1000.0);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  return cuEventElapsedTime_v2(milliseconds, start, end);
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (s.events.erase(event) == 0) return CUDA_ERROR_INVALID_HANDLE;
  delete event;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS: *text = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *text = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *text = "initialization error"; break;
    case CUDA_ERROR_DEINITIALIZED: *text = "driver shutting down"; break;
    case CUDA_ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; break;
    case CUDA_ERROR_INVALID_DEVICE: *text = "invalid device ordinal"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *text = "invalid device context"; break;
    case CUDA_ERROR_INVALID_HANDLE: *text = "invalid resource handle"; break;
    case CUDA_ERROR_NOT_FOUND: *text = "named symbol not found"; break;
    case CUDA_ERROR_NOT_READY: *text = "device not ready"; break;
    case CUDA_ERROR_UNKNOWN: *text = "unknown error"; break;
    default: *text = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT int fakecuda_advance_stream(CUstream stream, double us) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  CUstream_st* target = stream_or_default(s, stream);
  if (target == nullptr) return -1;
  target->clock_us += us;
  return 0;
}

FAKE_EXPORT int fakecuda_stream_clock(CUstream stream, double* us) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  CUstream_st* target = stream_or_default(s, stream);
  if (target == nullptr || us == nullptr) return -1;
  *us = target->clock_us;
  return 0;
}

FAKE_EXPORT int fakecuda_current_device(void) {
  return current_context ? current_context->device : -1;
}

FAKE_EXPORT int fakecuda_is_device_range(const void* pointer, std::size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return inside_allocation(s, reinterpret_cast<std::uintptr_t>(pointer), bytes) ? 1 : 0;
}
