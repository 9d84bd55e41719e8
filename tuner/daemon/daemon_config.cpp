#include "daemon/daemon_config.h"

#include <cctype>
#include <charconv>
#include <system_error>

#include "base/atomic_file.h"
#include "base/duration.h"
#include "base/strict_yaml.h"

namespace nccltune {

namespace {

constexpr std::chrono::seconds kMinInterval{1}, kMaxInterval{24 * 3600};

std::filesystem::path absolute_path(const YAML::Node& node, const std::string& field, bool may_be_empty) {
  const std::string text = node.IsNull() ? std::string() : yaml_text(node, field);
  if (text.empty() && may_be_empty) return {};
  if (text.empty() || text.front() != '/') yaml_fail(yaml_line(node), field, "must be an absolute path");
  return text;
}

std::string library(const YAML::Node& node, const std::string& field) {
  const std::string text = yaml_text(node, field);
  if (text.empty()) yaml_fail(yaml_line(node), field, "must name a library file");
  return text;
}

void read_daemon_section(const YAML::Node& daemon, DaemonConfig& config) {
  if (daemon.IsNull()) return;
  yaml_check_keys(daemon, "daemon",
                  {"interval", "runtime_dir", "state_dir", "metrics_dir", "nccl_conf", "expect",
                   "fleet_survey", "inspector", "nvml_lib", "nccl_lib", "cuda_lib"});
  if (const YAML::Node node = daemon["interval"]) {
    auto interval = parse_interval(yaml_text(node, "daemon.interval"));
    if (!interval) yaml_fail(yaml_line(node), "daemon.interval", interval.error());
    config.interval = *interval;
  }
  if (const YAML::Node node = daemon["runtime_dir"])
    config.runtime_dir = absolute_path(node, "daemon.runtime_dir", false);
  if (const YAML::Node node = daemon["state_dir"])
    config.state_dir = absolute_path(node, "daemon.state_dir", false);
  if (const YAML::Node node = daemon["metrics_dir"])
    config.metrics_dir = absolute_path(node, "daemon.metrics_dir", true);
  if (const YAML::Node node = daemon["expect"]) config.expect = absolute_path(node, "daemon.expect", true);
  if (const YAML::Node node = daemon["fleet_survey"])
    config.fleet_survey = absolute_path(node, "daemon.fleet_survey", true);
  if (const YAML::Node node = daemon["nccl_conf"]) {
    if (!node.IsNull()) {
      yaml_check_keys(node, "daemon.nccl_conf", {"manage", "path"});
      if (const YAML::Node manage = node["manage"])
        config.manage_nccl_conf = yaml_boolean(manage, "daemon.nccl_conf.manage");
      if (const YAML::Node path = node["path"])
        config.nccl_conf = absolute_path(path, "daemon.nccl_conf.path", false);
    }
  }
  if (const YAML::Node node = daemon["inspector"]) {
    if (!node.IsNull()) {
      yaml_check_keys(node, "daemon.inspector", {"dir", "drift_ratio", "drift_intervals"});
      if (const YAML::Node dir = node["dir"])
        config.inspector_dir = absolute_path(dir, "daemon.inspector.dir", true);
      if (const YAML::Node ratio = node["drift_ratio"]) {
        const double value = yaml_number(ratio, "daemon.inspector.drift_ratio");
        if (value <= 0 || value > 1)
          yaml_fail(yaml_line(ratio), "daemon.inspector.drift_ratio", "must be in (0, 1]");
        config.inspector_drift_ratio = value;
      }
      if (const YAML::Node intervals = node["drift_intervals"])
        config.inspector_drift_intervals =
            int(yaml_integer(intervals, "daemon.inspector.drift_intervals", 1, 1000));
    }
  }
  if (const YAML::Node node = daemon["nvml_lib"]) config.nvml_lib = library(node, "daemon.nvml_lib");
  if (const YAML::Node node = daemon["nccl_lib"]) config.nccl_lib = library(node, "daemon.nccl_lib");
  if (const YAML::Node node = daemon["cuda_lib"]) config.cuda_lib = library(node, "daemon.cuda_lib");
}

}  // namespace

Result<std::chrono::seconds> parse_interval(std::string_view text) {
  return parse_duration(text, kMinInterval, kMaxInterval);
}

Result<DaemonConfig> parse_daemon_config(std::string_view yaml_text, std::string_view origin) {
  DaemonConfig config;
  const Status parsed = parse_strict_yaml(yaml_text, origin, [&](const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file: every default
    yaml_check_keys(root, "", {"env", "daemon"});
    if (const YAML::Node daemon = root["daemon"]) read_daemon_section(daemon, config);
  });
  if (!parsed) return Error{parsed.error()};
  return config;
}

Result<std::string> read_node_config_text(const std::filesystem::path& file, bool named) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    if (named) return Error{file.string() + ": no such file (named as the config, so it must exist)"};
    return std::string();
  }
  return read_text_file(file, kMaxConfigBytes);
}

}  // namespace nccltune
