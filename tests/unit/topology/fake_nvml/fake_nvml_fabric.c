/* A stand-in libnvidia-ml.so.1 for the NVML adapter's fabric read: four GB200 GPUs of one NVL72
 * rack, the calls the adapter needs and nvmlDeviceGetGpuFabricInfoV as NVML answers it (the
 * struct's version word checked, v3 with the health summary, v2 without). GPU3 is still
 * registering. FAKE_NVML_FABRIC=v2 makes it a driver that knows only v2 (refuses v3 with
 * NVML_ERROR_ARGUMENT_VERSION_MISMATCH). Built with FAKE_NVML_WITHOUT_FABRIC, it has no fabric
 * call at all, as drivers before R550. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define GPUS 4

typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;

static const unsigned kDomains[GPUS] = {0x8, 0x9, 0x18, 0x19};
static int handles[GPUS];

static int index_of(nvmlDevice_t device) {
  for (int i = 0; i < GPUS; ++i)
    if ((void*)device == (void*)&handles[i]) return i;
  return -1;
}

nvmlReturn_t nvmlInit_v2(void) { return NVML_SUCCESS; }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case 23: return "Insufficient Resources";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = GPUS;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= GPUS) return NVML_ERROR_INVALID_ARGUMENT;
  *device = (nvmlDevice_t)(void*)&handles[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (index_of(device) < 0) return NVML_ERROR_INVALID_ARGUMENT;
  snprintf(name, length, "NVIDIA GB200");
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  const int i = index_of(device);
  if (i < 0) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof *pci);
  pci->domain = kDomains[i];
  pci->bus = 1;
  snprintf(pci->busId, sizeof pci->busId, "%08X:01:00.0", kDomains[i]);
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_WITHOUT_FABRIC
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfo_v3_t* info) {
  static const unsigned char kCluster[16] = {0x5b, 0x3f, 0x1c, 0x2e, 0x8a, 0x4d, 0x4e, 0x6b,
                                             0x9f, 0x0a, 0x7c, 0x2d, 0x1e, 0x3b, 0x4a, 0x56};
  const unsigned v3 = (unsigned)sizeof(nvmlGpuFabricInfo_v3_t) | (3u << 24);
  const unsigned v2 = (unsigned)offsetof(nvmlGpuFabricInfo_v3_t, healthSummary) | (2u << 24);
  const char* mode = getenv("FAKE_NVML_FABRIC");
  const int only_v2 = mode && strcmp(mode, "v2") == 0;
  const int i = index_of(device);
  if (i < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != v2 && (info->version != v3 || only_v2)) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const int registering = i == 3;
  if (!registering) memcpy(info->clusterUuid, kCluster, sizeof kCluster);
  info->status = NVML_SUCCESS;
  info->cliqueId = registering ? 0 : 32766;
  info->state = registering ? 2 : 3;
  info->healthMask = 0x1aa;
  if (info->version == v3) info->healthSummary = 1;
  return NVML_SUCCESS;
}
#endif
