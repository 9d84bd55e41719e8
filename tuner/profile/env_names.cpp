#include "profile/env_names.h"

#include <algorithm>
#include <iterator>

#include "profile/nccl_names.h"

namespace nccltune {

namespace {

bool is_upper_digit_or_underscore(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

bool is_safe_env_name(std::string_view name) {
  if (name.size() <= 5 || name.size() > 128 || name.substr(0, 5) != "NCCL_") return false;
  return std::all_of(name.begin() + 5, name.end(), is_upper_digit_or_underscore);
}

bool is_safe_env_value(std::string_view value) {
  if (value.empty() || value.size() > 1024) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("_,.:^=+-").find(c) != std::string_view::npos;
  });
}

namespace {

// "Ring,Tree", "^LL128": names of `variable`'s kind (NCCL_ALGO: algorithms, else protocols).
bool is_name_list(std::string_view variable, std::string_view list) {
  if (!list.empty() && list.front() == '^') list.remove_prefix(1);
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    if (!(variable == "NCCL_ALGO" ? nccl_algorithm_index(name) : nccl_protocol_index(name))) return false;
    start = comma + 1;
  }
  return true;
}

}  // namespace

bool is_safe_env_setting(std::string_view name, std::string_view value) {
  if (value.find(';') == std::string_view::npos) return is_safe_env_value(value);
  if ((name != "NCCL_ALGO" && name != "NCCL_PROTO") || value.size() > 1024) return false;
  bool plain = false;  // at most one entry without a function
  for (const NcclListEntry& entry : nccl_list_entries(value)) {
    if (!entry.function) {
      if (plain || !is_name_list(name, entry.list)) return false;
      plain = true;
    } else if (!is_nccl_function_name(*entry.function) || !is_name_list(name, entry.list)) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> served_env_problem(std::string_view name, std::string_view value,
                                              int nccl_version) {
  const std::string shown_name(name.substr(0, 40));
  if (!is_safe_env_name(name)) return "name '" + shown_name + "' does not match ^NCCL_[A-Z0-9_]+$";
  if (!is_known_nccl_variable(name, nccl_version)) {
    const int minor = nccl_version / 100 % 100;
    return "'" + shown_name + "' is no variable NCCL " +
           (nccl_version / 10000 == 2 && is_known_nccl_variable(name) ? "2." + std::to_string(minor) + " "
                                                                       : std::string()) +
           "reads (a misspelled name?)";
  }
  if (value.empty()) return "empty value";
  if (value.size() > 1024) return "longer than 1024 characters";
  if (!is_safe_env_value(value) && value.find(';') == std::string_view::npos)
    return "'" + std::string(value.substr(0, 40)) + "' has characters outside " + std::string(kSafeValueCharacters);
  if (name == "NCCL_ALGO" || name == "NCCL_PROTO") return nccl_list_problem(name, value, nccl_version);
  if (!is_safe_env_setting(name, value))
    return "'" + std::string(value.substr(0, 40)) + "' has characters outside " + std::string(kSafeValueCharacters);
  return knob_value_problem(name, value);
}

bool is_denied_env_name(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      // the shell and the loader
      "BASH_ENV", "ENV", "PATH", "IFS", "PS4", "CDPATH", "SHELLOPTS", "BASHOPTS", "GLIBC_TUNABLES",
      // code injection into CUDA, NVTX and interpreters a job may start
      "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH", "PYTHONPATH", "PYTHONHOME",
      "PYTHONSTARTUP", "PERL5LIB", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS",
      // NCCL 2.28 and its example plugins: code to load, files to read or write
      "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_ENV_PLUGIN", "NCCL_CONF_FILE",
      "NCCL_DEBUG_FILE", "NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_FILE", "NCCL_GRAPH_DUMP_FILE",
      "NCCL_TUNER_CONFIG_FILE", "NCCL_PROFILE_DUMP_FILE", "NCCL_INSPECTOR_DUMP_DIR"};
  if (std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames)) return true;
  if (name.starts_with("LD_") || name.starts_with("BASH_FUNC_")) return true;
  if (!name.starts_with("NCCL_")) return false;
  for (std::string_view suffix : {"_PLUGIN", "_FILE", "_DIR", "_PATH", "_LIB"})
    if (name.ends_with(suffix)) return true;
  return false;
}

bool is_allowable_env_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() < 'A' || name.front() > 'Z') return false;
  return std::all_of(name.begin(), name.end(), is_upper_digit_or_underscore) && !is_denied_env_name(name);
}

}  // namespace nccltune
