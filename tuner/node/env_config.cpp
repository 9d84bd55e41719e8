#include "node/env_config.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>
#include <system_error>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "base/strict_yaml.h"
#include "node/inspector_env.h"
#include "profile/env_names.h"

namespace nccltune {

namespace {

// "2.28" as 228: NCCL's major.minor, nothing else.
std::optional<int> major_minor(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size() || text.size() > 6)
    return std::nullopt;
  int major = 0, minor = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == dot) continue;
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    int& part = i < dot ? major : minor;
    part = part * 10 + (text[i] - '0');
  }
  if (minor > 99) return std::nullopt;
  return major * 100 + minor;
}

void read_nccl_compatible(const YAML::Node& node, EnvConfig& config) {
  const std::string range = yaml_text(node, "env.nccl_compatible");
  if (range.empty()) return;
  const auto dash = range.find('-');
  const std::optional<int> low = major_minor(std::string_view(range).substr(0, dash));
  const std::optional<int> high =
      dash == std::string::npos ? low : major_minor(std::string_view(range).substr(dash + 1));
  if (!low || !high || *low > *high)
    yaml_fail(yaml_line(node), "env.nccl_compatible",
              "'" + printable_excerpt(range, 40) + "' is not a range of NCCL versions like 2.27-2.29");
  config.nccl_compatible = NcclVersionRange{*low, *high};
}

// A path that goes into a job's environment, a shell and an env file as it is.
std::string inspector_path(const YAML::Node& node, const std::string& field) {
  const std::string path = yaml_text(node, field);
  if (!path.empty() && !is_safe_inspector_path(path))
    yaml_fail(yaml_line(node), field,
              "'" + printable_excerpt(path, 80) + "' is not an absolute path of " +
                  std::string(kInspectorPathCharacters) + " without a .. part");
  return path;
}

void read_inspector(const YAML::Node& section, InspectorConfig& inspector) {
  const std::string field = "env.inspector";
  if (section.IsNull()) return;
  yaml_expect_map(section, field);
  yaml_check_keys(section, field, {"plugin", "dump_dir", "output", "interval_s", "jobs"});
  if (const YAML::Node plugin = section["plugin"])
    inspector.plugin = inspector_path(plugin, field + ".plugin");
  if (const YAML::Node dir = section["dump_dir"])
    inspector.dump_dir = inspector_path(dir, field + ".dump_dir");
  if (const YAML::Node output = section["output"]) {
    const std::string text = yaml_text(output, field + ".output");
    if (text != "json" && text != "prometheus")
      yaml_fail(yaml_line(output), field + ".output",
                "'" + printable_excerpt(text, 40) + "' is not json or prometheus");
    inspector.output = text == "json" ? InspectorOutput::json : InspectorOutput::prometheus;
  }
  if (const YAML::Node interval = section["interval_s"]) {
    inspector.interval_s = static_cast<int>(yaml_integer(interval, field + ".interval_s", 0, 86400));
    // Inspector raises a shorter Prometheus interval to 30 s itself; saying so here is clearer.
    if (inspector.output == InspectorOutput::prometheus && inspector.interval_s > 0 &&
        inspector.interval_s < kInspectorPrometheusMinimumSeconds)
      yaml_fail(
          yaml_line(interval), field + ".interval_s",
          std::to_string(inspector.interval_s) + " is below Inspector's 30 s minimum for prometheus output");
  }
  if (const YAML::Node jobs = section["jobs"]) {
    const std::string text = yaml_text(jobs, field + ".jobs");
    if (text != "opt-in" && text != "all")
      yaml_fail(yaml_line(jobs), field + ".jobs",
                "'" + printable_excerpt(text, 40) + "' is not opt-in or all");
    inspector.every_job = text == "all";
  }
  if (inspector.enabled() && inspector.dump_dir.empty())
    yaml_fail(yaml_line(section), field + ".dump_dir", "missing: where the jobs' Inspector files go");
}

void read_env_section(const YAML::Node& section, EnvConfig& config) {
  const std::string field = "env";
  if (section.IsNull()) return;  // `env:` with nothing under it
  yaml_check_keys(section, field, {"store", "prefer", "allow_names", "nccl_compatible", "inspector"});
  if (const YAML::Node inspector = section["inspector"]) read_inspector(inspector, config.inspector);
  if (const YAML::Node range = section["nccl_compatible"]) read_nccl_compatible(range, config);
  if (const YAML::Node store = section["store"]) {
    const std::string path = yaml_text(store, "env.store");
    if (path.empty() || path.front() != '/')
      yaml_fail(yaml_line(store), "env.store",
                "'" + printable_excerpt(path, 80) + "' is not an absolute path");
    config.store = path;
  }
  if (const YAML::Node prefer = section["prefer"]) {
    const std::string side = yaml_text(prefer, "env.prefer");
    if (side != "below" && side != "above")
      yaml_fail(yaml_line(prefer), "env.prefer",
                "'" + printable_excerpt(side, 40) + "' is not below or above");
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
                      (is_denied_env_name(name)
                           ? "' loads code, changes the loader or a shell, or names a file: never emitted"
                           : "' does not match ^[A-Z][A-Z0-9_]*$"));
      if (std::find(config.allow_names.begin(), config.allow_names.end(), name) == config.allow_names.end())
        config.allow_names.push_back(name);
    }
  }
}

}  // namespace

Result<EnvConfig> parse_env_config(std::string_view yaml_text, std::string_view origin) {
  EnvConfig config;
  const Status parsed = parse_strict_yaml(yaml_text, origin, [&config](const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file: every default
    // The daemon: section belongs to nccltuned's reader (daemon_config.h), which checks it.
    yaml_check_keys(root, "", {"env", "daemon"});
    if (const YAML::Node section = root["env"]) read_env_section(section, config);
  });
  if (!parsed) return Error{parsed.error()};
  return config;
}

Result<EnvConfig> read_env_config(const std::filesystem::path& file, bool named) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    if (named) return Error{file.string() + ": no such file (named as the config, so it must exist)"};
    return EnvConfig{};
  }
  Result<std::string> text = read_text_file(file, kMaxConfigBytes);
  if (!text) return Error{text.error()};
  return parse_env_config(*text, file.string());
}

}  // namespace nccltune
