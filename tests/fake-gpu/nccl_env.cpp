#include "nccl_env.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "base/text_words.h"
#include "profile/nccl_names.h"

namespace nccltune::fake {

namespace {

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

}  // namespace

NcclEnv read_nccl_env(const char* const* environment) {
  NcclEnv env;
  for (const char* const* entry = environment; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos || text.rfind("NCCL_", 0) != 0) continue;
    if (equals + 1 == text.size()) continue;  // empty: NCCL treats it as unset
    env.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return env;
}

std::string normalized_value(std::string_view variable, std::string_view value) {
  if (variable == "NCCL_ALGO" || variable == "NCCL_PROTO") return lower(trim(value));
  if (variable == "NCCL_NET_GDR_LEVEL" || variable == "NCCL_P2P_LEVEL") {
    // ncclGetLevel (src/graph/paths.cc, 2.28.9): a path name as topoPathTypeStr spells it (strcmp:
    // case counts), else a value starting with a digit read by strtol in the old numbering, more
    // than 5 being SYS; anything else is ignored (NCCL's default stands).
    static constexpr std::array<const char*, 10> kPaths = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                                           "PXB", "P2C", "PXN", "PHB", "SYS"};
    static constexpr std::array<const char*, 6> kOldLevels = {"LOC", "PIX", "PXB", "PHB", "SYS", "SYS"};
    for (const char* path : kPaths)
      if (value == path) return path;
    if (!value.empty() && value[0] >= '0' && value[0] <= '9') {
      const long level = std::strtol(std::string(value).c_str(), nullptr, 0);
      return kOldLevels[static_cast<std::size_t>(std::clamp(level, 0L, 5L))];
    }
    return "(ignored by NCCL)";
  }
  return std::string(value);
}

bool holds(const Condition& condition, const NcclEnv& env) {
  for (const auto& entry : condition) {
    const std::string& variable = entry.first;  // named, not bound: clang 14 cannot capture a binding
    const auto& accepted = entry.second;
    const auto set = env.find(variable);
    const bool matches =
        std::any_of(accepted.begin(), accepted.end(), [&](const std::optional<std::string>& expected) {
          if (!expected) return set == env.end();
          return set != env.end() &&
                 normalized_value(variable, set->second) == normalized_value(variable, *expected);
        });
    if (!matches) return false;
  }
  return true;
}

bool NameFilter::allows(std::string_view name) const {
  const bool listed = std::find(names.begin(), names.end(), lower(name)) != names.end();
  return exclude ? !listed : listed;
}

std::optional<NameFilter> name_filter(const NcclEnv& env, std::string_view variable, std::string_view op,
                                      int nccl_version) {
  const auto set = env.find(std::string(variable));
  if (set == env.end()) return std::nullopt;
  const std::optional<std::string> list =
      nccl_version >= kFirstScopedListVersion ? nccl_list_for(set->second, op) : set->second;
  if (!list) return std::nullopt;
  std::string_view text = *list;
  NameFilter filter;
  if (!text.empty() && text.front() == '^') {
    filter.exclude = true;
    text.remove_prefix(1);
  }
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string name = lower(trim(text.substr(0, comma)));
    if (!name.empty()) filter.names.push_back(name);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return filter;
}

std::optional<long> integer_variable(const NcclEnv& env, std::string_view variable) {
  // ncclLoadParam (src/misc/param.cc, 2.28.9): strtoll(value, nullptr, 0), trailing characters
  // ignored and no digits read as 0; only an out-of-range value (errno) leaves the default.
  const auto set = env.find(std::string(variable));
  if (set == env.end()) return std::nullopt;
  errno = 0;
  const long long value = std::strtoll(set->second.c_str(), nullptr, 0);
  if (errno != 0) return std::nullopt;
  return static_cast<long>(value);
}

}  // namespace nccltune::fake
