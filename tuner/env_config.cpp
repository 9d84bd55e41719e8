#include "env_config.h"

#include <algorithm>
#include <iterator>
#include <system_error>

#include "atomic_file.h"
#include "printable_text.h"
#include "strict_yaml.h"

namespace nccltune {

namespace {

void read_env_section(const YAML::Node& section, EnvConfig& config) {
  const std::string field = "env";
  if (section.IsNull()) return;  // `env:` with nothing under it
  yaml_check_keys(section, field, {"store", "prefer", "allow_names"});
  if (const YAML::Node store = section["store"]) {
    const std::string path = yaml_text(store, "env.store");
    if (path.empty() || path.front() != '/')
      yaml_fail(yaml_line(store), "env.store", "'" + printable_excerpt(path, 80) + "' is not an absolute path");
    config.store = path;
  }
  if (const YAML::Node prefer = section["prefer"]) {
    const std::string side = yaml_text(prefer, "env.prefer");
    if (side != "below" && side != "above")
      yaml_fail(yaml_line(prefer), "env.prefer", "'" + printable_excerpt(side, 40) + "' is not below or above");
    config.prefer_below = side == "below";
  }
  if (const YAML::Node names = section["allow_names"]) {
    yaml_expect_list(names, "env.allow_names");
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string at = "env.allow_names[" + std::to_string(i) + "]";
      const std::string name = yaml_text(names[i], at);
      if (!is_allowable_env_name(name))
        yaml_fail(yaml_line(names[i]), at,
                  "'" + printable_excerpt(name, 40) +
                      (is_denied_env_name(name) ? "' loads code, changes the loader or a shell, or names a file: never emitted"
                                                : "' does not match ^[A-Z][A-Z0-9_]*$"));
      if (std::find(config.allow_names.begin(), config.allow_names.end(), name) == config.allow_names.end())
        config.allow_names.push_back(name);
    }
  }
}

}  // namespace

bool is_allowable_env_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() < 'A' || name.front() > 'Z') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }) &&
         !is_denied_env_name(name);
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

Result<EnvConfig> parse_env_config(std::string_view yaml_text, std::string_view origin) {
  EnvConfig config;
  const Result<bool> parsed = parse_strict_yaml(yaml_text, origin, [&config](const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file: every default
    yaml_expect_map(root, "");
    // Other sections (daemon:) belong to their own readers, which check them.
    if (const YAML::Node section = root["env"]) read_env_section(section, config);
  });
  if (!parsed) return Error{parsed.error()};
  return config;
}

Result<EnvConfig> read_env_config(const std::filesystem::path& file) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (status.type() == std::filesystem::file_type::not_found) return EnvConfig{};
  if (!std::filesystem::is_regular_file(status))
    return Error{file.string() + ": " + (error ? "cannot be read: " + error.message() : "not a regular file")};
  Result<std::string> text = read_text_file(file);
  if (!text) return Error{text.error()};
  return parse_env_config(*text, file.string());
}

}  // namespace nccltune
