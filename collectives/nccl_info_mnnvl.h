// Multi-node NVLink (GB200/GB300 NVL72) as NCCL's INFO log shows it: the two INIT lines and what
// NVML's fabric state and health mask in them mean.
//
// Every rank, when NVML reports a fabric state other than NOT_SUPPORTED (src/init.cc fillInfo,
// 2.21 to 2.30):
//   "MNNVL busId 0x%lx fabric UUID %lx.%lx cliqueId 0x%x state %d healthMask 0x%x"
// Every rank, once NCCL has enabled MNNVL (src/mnnvl.cc, 2.27+; src/init.cc before):
//   "MNNVL %d cliqueId %x cliqueSize %d cliqueRank %d" (2.30 appends " nvlDomainSize %d")
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccltune {

struct MnnvlFabricLine {
  std::string fabric_uuid;  // "%lx.%lx" as printed
  std::uint32_t clique_id = 0;
  int state = 0;
  std::uint32_t health_mask = 0;
};

struct MnnvlCliqueLine {
  bool enabled = false;  // the "MNNVL %d" NCCL decided
  std::uint32_t clique_id = 0;
  int clique_size = 0;
  int clique_rank = 0;
  std::optional<int> nvl_domain_size;  // 2.30+
};

// nullopt for any other line. `body` is the message after "NCCL INFO ".
std::optional<MnnvlFabricLine> parse_mnnvl_fabric_line(std::string_view body);
std::optional<MnnvlCliqueLine> parse_mnnvl_clique_line(std::string_view body);

// A fabric UUID of zero ("0.0") means the GPU is on no multi-node NVLink fabric: NVSwitch systems
// such as HGX H100 print state 3 with it, and NCCL never enables MNNVL with it (src/mnnvl.cc).
bool mnnvl_uuid_is_zero(std::string_view fabric_uuid);

// NVML's nvmlGpuFabricState_t (NCCL's src/include/nvmlwrap.h): 0 NOT_SUPPORTED, 1 NOT_STARTED,
// 2 IN_PROGRESS, 3 COMPLETED; "UNKNOWN" for any other value.
inline constexpr int kMnnvlStateCompleted = 3;
std::string_view mnnvl_state_name(int state);

// What a health mask reports wrong, by NVML's field names (nvml.h NVML_GPU_FABRIC_HEALTH_MASK_*).
// The mask is a set of fields, not a set of alarm bits: bits 1:0 DEGRADED_BW, 3:2 ROUTE_RECOVERY,
// 5:4 ROUTE_UNHEALTHY, 7:6 ACCESS_TIMEOUT_RECOVERY each hold 0 (not supported), 1 (TRUE: the
// problem is there) or 2 (FALSE); bits 11:8 INCORRECT_CONFIGURATION hold 0 (not supported),
// 1 (NONE) or the kind of misconfiguration (2 and up). So a healthy GPU reads 0x1aa, and only a
// TRUE field or a configuration above NONE is a problem: "DEGRADED_BW",
// "INCORRECT_CONFIGURATION=INSUFFICIENT_NVLINKS". Bits above 11 are not judged.
std::vector<std::string> mnnvl_health_problems(std::uint32_t health_mask);

}  // namespace nccltune
