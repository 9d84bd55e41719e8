#include "topology/fabric.h"

#include <array>
#include <charconv>

namespace nccltune {
namespace {

// nvml.h's NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_* and _WIDTH_* (the width is a mask, not a count).
constexpr unsigned kShiftDegradedBandwidth = 0;
constexpr unsigned kShiftRouteRecovery = 2;
constexpr unsigned kShiftRouteUnhealthy = 4;
constexpr unsigned kShiftAccessTimeoutRecovery = 6;
constexpr unsigned kConditionWidth = 0x3;
constexpr unsigned kShiftIncorrectConfiguration = 8;
constexpr unsigned kIncorrectConfigurationWidth = 0xf;

FabricCondition condition_at(std::uint32_t mask, unsigned shift) {
  return static_cast<FabricCondition>((mask >> shift) & kConditionWidth);
}

std::uint32_t condition_bits(FabricCondition condition, unsigned shift) {
  return (static_cast<std::uint32_t>(condition) & kConditionWidth) << shift;
}

constexpr std::array<std::string_view, 8> kIncorrectConfigurations = {"",  // not supported
                                                                      "none",
                                                                      "incorrect_sysguid",
                                                                      "incorrect_chassis_sn",
                                                                      "no_partition",
                                                                      "insufficient_nvlinks",
                                                                      "incompatible_gpu_fw",
                                                                      "invalid_location"};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view to_string(FabricState state) {
  switch (state) {
    case FabricState::not_supported: return "not_supported";
    case FabricState::not_started: return "not_started";
    case FabricState::in_progress: return "in_progress";
    case FabricState::completed: return "completed";
  }
  return "?";
}

std::optional<FabricState> fabric_state_from_string(std::string_view text) {
  for (auto state : {FabricState::not_supported, FabricState::not_started, FabricState::in_progress,
                     FabricState::completed})
    if (to_string(state) == text) return state;
  return std::nullopt;
}

FabricHealth decode_fabric_health(std::uint32_t mask) {
  FabricHealth health;
  health.degraded_bandwidth = condition_at(mask, kShiftDegradedBandwidth);
  health.route_recovery = condition_at(mask, kShiftRouteRecovery);
  health.route_unhealthy = condition_at(mask, kShiftRouteUnhealthy);
  health.access_timeout_recovery = condition_at(mask, kShiftAccessTimeoutRecovery);
  health.incorrect_configuration =
      static_cast<int>((mask >> kShiftIncorrectConfiguration) & kIncorrectConfigurationWidth);
  return health;
}

std::uint32_t encode_fabric_health(const FabricHealth& health) {
  return condition_bits(health.degraded_bandwidth, kShiftDegradedBandwidth) |
         condition_bits(health.route_recovery, kShiftRouteRecovery) |
         condition_bits(health.route_unhealthy, kShiftRouteUnhealthy) |
         condition_bits(health.access_timeout_recovery, kShiftAccessTimeoutRecovery) |
         ((static_cast<std::uint32_t>(health.incorrect_configuration) & kIncorrectConfigurationWidth)
          << kShiftIncorrectConfiguration);
}

std::string incorrect_configuration_name(int code) {
  if (code >= 0 && static_cast<std::size_t>(code) < kIncorrectConfigurations.size())
    return std::string(kIncorrectConfigurations[static_cast<std::size_t>(code)]);
  return "code " + std::to_string(code);
}

std::string_view to_string(FabricSummary summary) {
  switch (summary) {
    case FabricSummary::not_supported: return "not_supported";
    case FabricSummary::healthy: return "healthy";
    case FabricSummary::unhealthy: return "unhealthy";
    case FabricSummary::limited_capacity: return "limited_capacity";
  }
  return "?";
}

std::optional<FabricSummary> fabric_summary_from_string(std::string_view text) {
  for (auto summary : {FabricSummary::not_supported, FabricSummary::healthy, FabricSummary::unhealthy,
                       FabricSummary::limited_capacity})
    if (to_string(summary) == text) return summary;
  return std::nullopt;
}

bool GpuFabric::in_multi_node_domain() const {
  return state == FabricState::completed && !status_failed() && cluster_uuid && !uuid_is_zero(*cluster_uuid);
}

std::vector<FabricHealthProblem> fabric_health_problems(const GpuFabric& fabric) {
  std::vector<FabricHealthProblem> problems;
  if (fabric.health_mask) {
    const FabricHealth health = decode_fabric_health(*fabric.health_mask);
    const auto add = [&](FabricCondition condition, const char* field, const char* meaning) {
      if (condition == FabricCondition::present) problems.push_back({field, meaning});
    };
    add(health.degraded_bandwidth, "degraded_bandwidth", "NVLink bandwidth degraded");
    add(health.route_recovery, "route_recovery", "route recovery in progress");
    add(health.route_unhealthy, "route_unhealthy", "route unhealthy");
    add(health.access_timeout_recovery, "access_timeout_recovery", "access timeout recovery in progress");
    if (health.incorrect_configuration > 1)
      problems.push_back(
          {"incorrect_configuration",
           "incorrect configuration: " + incorrect_configuration_name(health.incorrect_configuration)});
  }
  if (problems.empty() &&
      (fabric.summary == FabricSummary::unhealthy || fabric.summary == FabricSummary::limited_capacity))
    problems.push_back({"summary", "health summary " + std::string(to_string(*fabric.summary))});
  return problems;
}

std::string uuid_text(const unsigned char (&bytes)[16]) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::optional<std::string> normalize_uuid(std::string_view text) {
  unsigned char bytes[16] = {};
  int digits = 0;
  for (char c : text) {
    if (c == '-') continue;
    const int value = hex_digit(c);
    if (value < 0 || digits == 32) return std::nullopt;
    bytes[digits / 2] = static_cast<unsigned char>(bytes[digits / 2] | (digits % 2 ? value : value << 4));
    ++digits;
  }
  if (digits != 32) return std::nullopt;
  return uuid_text(bytes);
}

bool uuid_is_zero(std::string_view uuid) {
  for (char c : uuid)
    if (c != '0' && c != '-') return false;
  return true;
}

std::string health_mask_text(std::uint32_t mask) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string digits;
  do {
    digits.insert(digits.begin(), kDigits[mask & 0xf]);
    mask >>= 4;
  } while (mask != 0);
  return "0x" + digits;
}

std::optional<std::uint32_t> parse_health_mask(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty() || hex_digit(text.front()) < 0) return std::nullopt;
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace nccltune
