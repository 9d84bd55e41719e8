// A GPU's registration with its NVLink fabric, as NVML's nvmlDeviceGetGpuFabricInfoV reports it
// (nvmlGpuFabricInfo_v3_t) and `nvidia-smi -q` prints it in its "Fabric" block. On a multi-node
// NVLink rack (GB200/GB300 NVL72) every GPU registers with the fabric manager and receives the
// rack's cluster UUID and a clique id; the GPUs that share both reach each other over NVLink
// across trays (NCCL's MNNVL). On an NVSwitch node (HGX H100) the registration completes with a
// zero cluster UUID: a fabric, but one domain per node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccltune {

// nvmlGpuFabricState_t: NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0, NOT_STARTED 1, IN_PROGRESS 2,
// COMPLETED 3. NCCL takes a GPU into MNNVL only at COMPLETED (src/mnnvl.cc, ncclMnnvlCheck).
enum class FabricState { not_supported = 0, not_started = 1, in_progress = 2, completed = 3 };
std::string_view to_string(FabricState state);  // "not_supported", "not_started", "in_progress", "completed"
std::optional<FabricState> fabric_state_from_string(std::string_view text);

// One 2-bit field of the health mask (nvml.h NVML_GPU_FABRIC_HEALTH_MASK_<FIELD>_{NOT_SUPPORTED,
// TRUE,FALSE} = 0, 1, 2): whether the condition it names is there.
enum class FabricCondition { not_supported = 0, present = 1, absent = 2, invalid = 3 };

// nvmlGpuFabricInfo_v3_t.healthMask decoded, each field at its nvml.h shift: bits 1:0 DEGRADED_BW,
// 3:2 ROUTE_RECOVERY, 5:4 ROUTE_UNHEALTHY, 7:6 ACCESS_TIMEOUT_RECOVERY, 11:8 INCORRECT_CONFIGURATION
// (4 bits: 0 not supported, 1 NONE, 2 INCORRECT_SYSGUID, 3 INCORRECT_CHASSIS_SN, 4 NO_PARTITION,
// 5 INSUFFICIENT_NVLINKS, 6 INCOMPATIBLE_GPU_FW, 7 INVALID_LOCATION). The mask is a set of fields,
// not of alarm bits: a GPU whose four conditions are all absent reads 0xaa (0x1aa where the driver
// also reports the configuration as NONE); 0 means the driver reported no health at all.
struct FabricHealth {
  FabricCondition degraded_bandwidth = FabricCondition::not_supported;
  FabricCondition route_recovery = FabricCondition::not_supported;
  FabricCondition route_unhealthy = FabricCondition::not_supported;
  FabricCondition access_timeout_recovery = FabricCondition::not_supported;
  int incorrect_configuration = 0;  // 0 not supported, 1 none, 2.. the misconfiguration
  friend bool operator==(const FabricHealth&, const FabricHealth&) = default;
};
FabricHealth decode_fabric_health(std::uint32_t mask);
std::uint32_t encode_fabric_health(const FabricHealth& health);

// "none", "incorrect_sysguid", "incorrect_chassis_sn", "no_partition", "insufficient_nvlinks",
// "incompatible_gpu_fw", "invalid_location"; "code N" for a value nvml.h does not name; empty for 0.
std::string incorrect_configuration_name(int code);

// nvmlGpuFabricInfo_v3_t.healthSummary (NVML_GPU_FABRIC_HEALTH_SUMMARY_*): NOT_SUPPORTED 0,
// HEALTHY 1, UNHEALTHY 2, LIMITED_CAPACITY 3. Drivers before R580 have no summary.
enum class FabricSummary { not_supported = 0, healthy = 1, unhealthy = 2, limited_capacity = 3 };
std::string_view to_string(FabricSummary summary);  // "not_supported", "healthy", ...
std::optional<FabricSummary> fabric_summary_from_string(std::string_view text);

struct GpuFabric {
  FabricState state = FabricState::not_supported;
  // The probe's nvmlReturn_t as nvmlErrorString words it, as nvidia-smi prints it: "Success",
  // "Insufficient Resources". NVML says it means something only once the state is COMPLETED.
  std::optional<std::string> status;
  std::optional<std::string> cluster_uuid;  // "dc6e40c4-d722-4357-9ba6-5291dd461278", lower case
  std::optional<std::uint32_t> clique_id;
  std::optional<std::uint32_t> health_mask;  // NVML's encoding; null where no source gave it
  std::optional<FabricSummary> summary;

  bool status_success() const { return status == "Success"; }
  bool status_failed() const { return status && !status_success(); }
  // Registered in a multi-node NVLink domain: COMPLETED with a cluster UUID that is not zero, what
  // NCCL takes a GPU into MNNVL with (src/mnnvl.cc, which reads neither status nor health), and
  // no probe status known to have failed (a failed probe comes with a zero UUID on real racks).
  bool in_multi_node_domain() const;
  friend bool operator==(const GpuFabric&, const GpuFabric&) = default;
};

// What a GPU's fabric health reports wrong, one entry per field: "degraded_bandwidth",
// "route_recovery", "route_unhealthy", "access_timeout_recovery" where the condition is present,
// "incorrect_configuration" above NONE, and "summary" where the driver's summary is unhealthy or
// limited capacity but no field says why (a field this reader does not know). Empty when healthy
// or when nothing about health is known.
struct FabricHealthProblem {
  std::string field;
  std::string meaning;  // "NVLink bandwidth degraded", "incorrect configuration: no_partition"
};
std::vector<FabricHealthProblem> fabric_health_problems(const GpuFabric& fabric);

// A UUID's 16 bytes as "8-4-4-4-12" lower-case hex, and that text (either case, with or without
// dashes) normalized back; nullopt when it is not 32 hex digits.
std::string uuid_text(const unsigned char (&bytes)[16]);
std::optional<std::string> normalize_uuid(std::string_view text);
bool uuid_is_zero(std::string_view uuid);

// "0x1aa", and its reader: hex with 0x, or decimal; nullopt for anything else or beyond 32 bits.
std::string health_mask_text(std::uint32_t mask);
std::optional<std::uint32_t> parse_health_mask(std::string_view text);

}  // namespace nccltune
