#include "collectives/nccl_info_mnnvl.h"

#include <charconv>
#include <iterator>
#include <utility>

#include "base/text_words.h"

namespace nccltune {
namespace {

// A hex word NCCL printed with %x or %lx, with or without "0x"; nullopt past 64 bits.
std::optional<std::uint64_t> hex_value(std::string_view word) {
  if (word.starts_with("0x") || word.starts_with("0X")) word.remove_prefix(2);
  if (word.empty() || word.size() > 16) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value, 16);
  if (error != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

std::optional<std::uint32_t> hex32(std::string_view word) {
  const auto value = hex_value(word);
  if (!value || *value > 0xffffffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*value);
}

std::optional<int> small_int(std::string_view word) {
  const auto value = to_int(word);
  if (!value || *value < 0 || *value > (int64_t{1} << 24)) return std::nullopt;
  return static_cast<int>(*value);
}

bool words_are(const std::vector<std::string_view>& words, std::size_t at, std::string_view expected) {
  return at < words.size() && words[at] == expected;
}

}  // namespace

std::optional<MnnvlFabricLine> parse_mnnvl_fabric_line(std::string_view body) {
  // MNNVL busId 0x1b000 fabric UUID 5c3a...2f1.9d4e...07 cliqueId 0x7fff state 3 healthMask 0x1aa
  const auto words = split_words(body);
  if (words.size() != 12 || words[0] != "MNNVL" || words[1] != "busId" || !words_are(words, 3, "fabric") ||
      !words_are(words, 4, "UUID") || !words_are(words, 6, "cliqueId") || !words_are(words, 8, "state") ||
      !words_are(words, 10, "healthMask"))
    return std::nullopt;
  const std::string_view uuid = words[5];
  const std::size_t dot = uuid.find('.');
  if (dot == std::string_view::npos || !hex_value(uuid.substr(0, dot)) || !hex_value(uuid.substr(dot + 1)))
    return std::nullopt;
  const auto clique = hex32(words[7]);
  const auto state = small_int(words[9]);
  const auto mask = hex32(words[11]);
  if (!clique || !state || !mask) return std::nullopt;
  return MnnvlFabricLine{std::string(uuid), *clique, *state, *mask};
}

std::optional<MnnvlCliqueLine> parse_mnnvl_clique_line(std::string_view body) {
  // MNNVL 1 cliqueId 7fff cliqueSize 72 cliqueRank 5 [nvlDomainSize 72]
  const auto words = split_words(body);
  if ((words.size() != 8 && words.size() != 10) || words[0] != "MNNVL" || !words_are(words, 2, "cliqueId") ||
      !words_are(words, 4, "cliqueSize") || !words_are(words, 6, "cliqueRank"))
    return std::nullopt;
  const auto enabled = small_int(words[1]);
  const auto clique = hex32(words[3]);
  const auto size = small_int(words[5]);
  const auto rank = small_int(words[7]);
  if (!enabled || !clique || !size || !rank) return std::nullopt;
  MnnvlCliqueLine line{*enabled != 0, *clique, *size, *rank, std::nullopt};
  if (words.size() == 10) {
    if (words[8] != "nvlDomainSize") return std::nullopt;
    line.nvl_domain_size = small_int(words[9]);
    if (!line.nvl_domain_size) return std::nullopt;
  }
  return line;
}

bool mnnvl_uuid_is_zero(std::string_view fabric_uuid) {
  const std::size_t dot = fabric_uuid.find('.');
  if (dot == std::string_view::npos) return false;
  return hex_value(fabric_uuid.substr(0, dot)) == 0u && hex_value(fabric_uuid.substr(dot + 1)) == 0u;
}

std::string_view mnnvl_state_name(int state) {
  switch (state) {
    case 0: return "NOT_SUPPORTED";
    case 1: return "NOT_STARTED";
    case 2: return "IN_PROGRESS";
    case kMnnvlStateCompleted: return "COMPLETED";
    default: return "UNKNOWN";
  }
}

std::vector<std::string> mnnvl_health_problems(std::uint32_t health_mask) {
  // The TRUE/FALSE fields, 2 bits each; 1 is TRUE.
  static constexpr std::pair<int, std::string_view> kFlags[] = {
      {0, "DEGRADED_BW"}, {2, "ROUTE_RECOVERY"}, {4, "ROUTE_UNHEALTHY"}, {6, "ACCESS_TIMEOUT_RECOVERY"}};
  // INCORRECT_CONFIGURATION, bits 11:8: 0 NOT_SUPPORTED, 1 NONE, then the kinds.
  static constexpr std::string_view kConfigurations[] = {"NOT_SUPPORTED",       "NONE",
                                                         "INCORRECT_SYSGUID",   "INCORRECT_CHASSIS_SN",
                                                         "NO_PARTITION",        "INSUFFICIENT_NVLINKS",
                                                         "INCOMPATIBLE_GPU_FW", "INVALID_LOCATION",
                                                         "GPU_STATE_INVALID"};
  std::vector<std::string> problems;
  for (const auto& [shift, name] : kFlags)
    if (((health_mask >> shift) & 0x3u) == 1u) problems.emplace_back(name);
  const std::uint32_t configuration = (health_mask >> 8) & 0xfu;
  if (configuration >= 2) {
    problems.push_back("INCORRECT_CONFIGURATION=" + (configuration < std::size(kConfigurations)
                                                         ? std::string(kConfigurations[configuration])
                                                         : std::to_string(configuration)));
  }
  return problems;
}

}  // namespace nccltune
