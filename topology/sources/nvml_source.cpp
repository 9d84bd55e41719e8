#include "topology/sources/nvml_source.h"

#include <dlfcn.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "base/clean_text.h"
#include "topology/node_topology.h"

namespace nccltune {
namespace {

// --- The NVML declarations the project needs (nvml.h is not required to build). ---
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr unsigned kNvlinkMaxLinks = 18;
constexpr int kNvlinkDeviceTypeSwitch = 2;

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

// nvmlDeviceGetMemoryInfo (the v1 struct, in every NVML) and nvmlDeviceGetBAR1MemoryInfo, in bytes.
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlBAR1Memory_t {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
};

// nvmlDeviceGetFieldValues (NVML since R418) and the C2C fields of nvml.h (values never change):
// C2C_LINK_COUNT 170 links present, C2C_LINK_GET_STATUS 171 per link (scopeId = link,
// 0 INACTIVE / 1 ACTIVE), C2C_LINK_GET_MAX_BW 172 per active link in MB/s.
constexpr unsigned kFieldC2cLinkCount = 170;
constexpr unsigned kFieldC2cLinkStatus = 171;
constexpr unsigned kFieldC2cLinkMaxBw = 172;

union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

// nvmlDeviceGetGpuFabricInfoV's struct, v3 (R580): v2 (R550) is the same without healthSummary, so
// a v2 call fills all but the last field. The version word is nvml.h's NVML_STRUCT_VERSION: the
// struct's size with the version number in the top byte. A driver that knows only v2 refuses v3
// with NVML_ERROR_ARGUMENT_VERSION_MISMATCH and is asked again with v2.
struct nvmlGpuFabricInfoV_t {
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
};
static_assert(sizeof(nvmlGpuFabricInfoV_t) == 40 && offsetof(nvmlGpuFabricInfoV_t, healthSummary) == 36);
constexpr unsigned kFabricInfoV3 = sizeof(nvmlGpuFabricInfoV_t) | (3u << 24);
constexpr unsigned kFabricInfoV2 = offsetof(nvmlGpuFabricInfoV_t, healthSummary) | (2u << 24);
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;

struct NvmlApi {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*driver_version)(char*, unsigned);
  nvmlReturn_t (*cuda_driver_version)(int*);
  nvmlReturn_t (*device_count)(unsigned*);
  nvmlReturn_t (*device_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*device_name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*device_pci)(nvmlDevice_t, nvmlPciInfo_t*);
  nvmlReturn_t (*compute_capability)(nvmlDevice_t, int*, int*);               // optional
  nvmlReturn_t (*cpu_affinity)(nvmlDevice_t, unsigned, unsigned long*);       // optional
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*);                 // optional
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*);  // optional
  nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, int*);           // optional
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t*);         // optional
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*);                   // optional
  nvmlReturn_t (*bar1_memory_info)(nvmlDevice_t, nvmlBAR1Memory_t*);          // optional
  nvmlReturn_t (*fabric_info)(nvmlDevice_t, nvmlGpuFabricInfoV_t*);           // optional
};

struct LibraryCloser {
  void operator()(void* handle) const { dlclose(handle); }
};

template <class Fn>
bool bind(void* handle, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return fn != nullptr;
}

std::string cpulist(const std::vector<unsigned long>& mask) {
  std::string out;
  const int bits = static_cast<int>(mask.size() * sizeof(unsigned long) * CHAR_BIT);
  auto is_set = [&](int cpu) {
    return (mask[static_cast<size_t>(cpu) / (sizeof(unsigned long) * CHAR_BIT)] >>
            (static_cast<size_t>(cpu) % (sizeof(unsigned long) * CHAR_BIT))) &
           1UL;
  };
  for (int cpu = 0; cpu < bits;) {
    if (!is_set(cpu)) {
      ++cpu;
      continue;
    }
    int last = cpu;
    while (last + 1 < bits && is_set(last + 1)) ++last;
    if (!out.empty()) out += ",";
    out += last == cpu ? std::to_string(cpu) : std::to_string(cpu) + "-" + std::to_string(last);
    cpu = last + 1;
  }
  return out;
}

// NVLink-C2C to the CPU, read the way NCCL 2.27/2.28 reads it (src/graph/xml.cc,
// ncclTopoGetXmlFromGpu): only for sm >= 90, NVML_FI_DEV_C2C_LINK_COUNT, then for each link
// NVML_FI_DEV_C2C_LINK_GET_STATUS == 1 (and GET_MAX_BW succeeding) counts as active; with at
// least one active link NCCL adds <c2c bw=MB/s count=N> to the GPU, which src/graph/topo.cc
// (ncclTopoAddC2c) turns into a LINK_C2C between the GPU and its local CPU. Leaves the fact
// null when NVML cannot say (older driver without the field, or the call fails).
void read_c2c(const NvmlApi& api, nvmlDevice_t device, NvmlGpu& gpu) {
  if (gpu.sm && *gpu.sm < 90) {
    gpu.c2c_links = 0;  // NCCL never looks for C2C before Hopper; no such GPU has it
    return;
  }
  if (!api.field_values) return;
  nvmlFieldValue_t count{};
  count.fieldId = kFieldC2cLinkCount;
  if (api.field_values(device, 1, &count) != NVML_SUCCESS || count.nvmlReturn != NVML_SUCCESS) return;
  int active = 0;
  std::optional<int> bw;
  for (unsigned link = 0; link < count.value.uiVal && link < 64; ++link) {
    nvmlFieldValue_t fields[2]{};
    fields[0].fieldId = kFieldC2cLinkStatus;
    fields[0].scopeId = link;
    fields[1].fieldId = kFieldC2cLinkMaxBw;
    fields[1].scopeId = link;
    if (api.field_values(device, 2, fields) != NVML_SUCCESS || fields[0].nvmlReturn != NVML_SUCCESS ||
        fields[0].value.uiVal != 1 || fields[1].nvmlReturn != NVML_SUCCESS)
      continue;
    ++active;
    bw = static_cast<int>(fields[1].value.uiVal);
  }
  gpu.c2c_links = active;
  if (active > 0) gpu.c2c_bw_mbps = bw;
}

// A total NVML gives, or null: the call is missing or fails (NOT_SUPPORTED for BAR1 on Grace
// superchips), or the total is 0 or beyond any GPU, which no real one reports.
std::optional<std::uint64_t> memory_total(nvmlReturn_t rc, unsigned long long total) {
  if (rc != NVML_SUCCESS || total == 0 || total > kMaxGpuMemoryBytes) return std::nullopt;
  return static_cast<std::uint64_t>(total);
}

void read_memory(const NvmlApi& api, nvmlDevice_t device, NvmlGpu& gpu) {
  if (api.memory_info) {
    nvmlMemory_t memory{};
    gpu.memory_bytes = memory_total(api.memory_info(device, &memory), memory.total);
  }
  if (api.bar1_memory_info) {
    nvmlBAR1Memory_t bar1{};
    gpu.bar1_bytes = memory_total(api.bar1_memory_info(device, &bar1), bar1.bar1Total);
  }
}

// The GPU's fabric registration, asked as NCCL asks it (src/init.cc, fillInfo: a GPU whose call
// fails counts as NOT_SUPPORTED). A driver without the call (before R550) and a GPU without a
// fabric (NOT_SUPPORTED) read as not supported; any other failure leaves the fabric unknown.
void read_fabric(const NvmlApi& api, nvmlDevice_t device, NvmlGpu& gpu) {
  GpuFabric fabric;
  if (!api.fabric_info) {
    gpu.fabric = fabric;
    return;
  }
  nvmlGpuFabricInfoV_t info{};
  info.version = kFabricInfoV3;
  nvmlReturn_t rc = api.fabric_info(device, &info);
  const bool v3 = rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (!v3) {
    info = {};
    info.version = kFabricInfoV2;
    rc = api.fabric_info(device, &info);
  }
  if (rc == NVML_ERROR_NOT_SUPPORTED || (rc == NVML_SUCCESS && info.state == 0)) {
    gpu.fabric = fabric;
    return;
  }
  if (rc != NVML_SUCCESS || info.state > 3) return;
  fabric.state = static_cast<FabricState>(info.state);
  const char* status = api.error_string(info.status);
  fabric.status = status ? cleaned_text(status) : "NVML error " + std::to_string(info.status);
  fabric.cluster_uuid = uuid_text(info.clusterUuid);
  fabric.clique_id = info.cliqueId;
  fabric.health_mask = info.healthMask;
  if (v3 && info.healthSummary <= 3) fabric.summary = static_cast<FabricSummary>(info.healthSummary);
  gpu.fabric = fabric;
}

NvmlGpu read_gpu(const NvmlApi& api, nvmlDevice_t device, int index) {
  NvmlGpu gpu;
  gpu.index = index;
  char name[96] = {};
  if (api.device_name(device, name, sizeof name) == NVML_SUCCESS) gpu.name = cleaned_text(name);
  nvmlPciInfo_t pci{};
  if (api.device_pci(device, &pci) == NVML_SUCCESS)
    gpu.pci = normalize_pci_address(pci.busId).value_or(pci.busId);
  int major = 0, minor = 0;
  if (api.compute_capability && api.compute_capability(device, &major, &minor) == NVML_SUCCESS)
    gpu.sm = major * 10 + minor;
  std::vector<unsigned long> mask(64);
  if (api.cpu_affinity &&
      api.cpu_affinity(device, static_cast<unsigned>(mask.size()), mask.data()) == NVML_SUCCESS)
    gpu.cpu_affinity = cpulist(mask);
  read_c2c(api, device, gpu);
  read_memory(api, device, gpu);
  read_fabric(api, device, gpu);
  if (!api.nvlink_state || !api.nvlink_remote_pci) return gpu;
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    int active = 0;
    if (api.nvlink_state(device, link, &active) != NVML_SUCCESS || !active) continue;
    nvmlPciInfo_t remote{};
    if (api.nvlink_remote_pci(device, link, &remote) != NVML_SUCCESS) continue;
    int type = -1;
    const bool is_switch = api.nvlink_remote_type &&
                           api.nvlink_remote_type(device, link, &type) == NVML_SUCCESS &&
                           type == kNvlinkDeviceTypeSwitch;
    const std::string remote_pci = normalize_pci_address(remote.busId).value_or(remote.busId);
    const std::string kind = is_switch ? "nvswitch" : "gpu";
    bool counted = false;
    for (auto& peer : gpu.nvlink_peers) {
      if (peer.pci == remote_pci && peer.kind == kind) {
        ++peer.links;
        counted = true;
      }
    }
    if (!counted) gpu.nvlink_peers.push_back({remote_pci, kind, 1});
  }
  return gpu;
}

}  // namespace

Result<NvmlFacts> read_nvml_live(const std::string& library) {
  std::unique_ptr<void, LibraryCloser> handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) return Error{library + ": not loaded (" + std::string(dlerror()) + ")"};
  NvmlApi api{};
  void* h = handle.get();
  const bool required =
      bind(h, "nvmlInit_v2", api.init) && bind(h, "nvmlShutdown", api.shutdown) &&
      bind(h, "nvmlErrorString", api.error_string) && bind(h, "nvmlDeviceGetCount_v2", api.device_count) &&
      bind(h, "nvmlDeviceGetHandleByIndex_v2", api.device_by_index) &&
      bind(h, "nvmlDeviceGetName", api.device_name) && bind(h, "nvmlDeviceGetPciInfo_v3", api.device_pci);
  if (!required) return Error{library + ": a required NVML symbol is missing (driver too old?)"};
  bind(h, "nvmlSystemGetDriverVersion", api.driver_version);
  bind(h, "nvmlSystemGetCudaDriverVersion_v2", api.cuda_driver_version);
  bind(h, "nvmlDeviceGetCudaComputeCapability", api.compute_capability);
  bind(h, "nvmlDeviceGetCpuAffinity", api.cpu_affinity);
  bind(h, "nvmlDeviceGetNvLinkState", api.nvlink_state);
  bind(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.nvlink_remote_pci);
  bind(h, "nvmlDeviceGetNvLinkRemoteDeviceType", api.nvlink_remote_type);
  bind(h, "nvmlDeviceGetFieldValues", api.field_values);
  bind(h, "nvmlDeviceGetMemoryInfo", api.memory_info);
  bind(h, "nvmlDeviceGetBAR1MemoryInfo", api.bar1_memory_info);
  bind(h, "nvmlDeviceGetGpuFabricInfoV", api.fabric_info);

  if (nvmlReturn_t rc = api.init(); rc != NVML_SUCCESS)
    return Error{library + ": nvmlInit failed: " + api.error_string(rc)};
  NvmlFacts facts;
  char version[96] = {};
  if (api.driver_version && api.driver_version(version, sizeof version) == NVML_SUCCESS)
    facts.driver_version = version;
  int cuda_version = 0;
  if (api.cuda_driver_version && api.cuda_driver_version(&cuda_version) == NVML_SUCCESS)
    facts.cuda_driver_version = cuda_version;
  unsigned count = 0;
  if (nvmlReturn_t rc = api.device_count(&count); rc != NVML_SUCCESS) {
    api.shutdown();
    return Error{library + ": nvmlDeviceGetCount failed: " + api.error_string(rc)};
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (api.device_by_index(i, &device) != NVML_SUCCESS) continue;
    facts.gpus.push_back(read_gpu(api, device, static_cast<int>(i)));
  }
  api.shutdown();
  return facts;
}

}  // namespace nccltune
