// The `daemon:` section of /etc/nccltune/nccltune.yaml (every key documented in
// configs/nccltune.yaml), read only by nccltuned. The `env:` section belongs to env_config.h and
// is skipped here; any other top-level key, and any unknown key inside `daemon:`, is an error
// naming file:line and the key.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "result.h"

namespace nccltune {

inline constexpr std::string_view kDefaultDaemonConfig = "/etc/nccltune/nccltune.yaml";

struct DaemonConfig {
  std::chrono::seconds interval{300};
  std::filesystem::path runtime_dir = "/run/nccltune";
  std::filesystem::path state_dir = "/var/lib/nccltune";
  std::filesystem::path metrics_dir = "/var/lib/node_exporter/textfile_collector";  // empty: no metrics
  bool manage_nccl_conf = false;
  std::filesystem::path nccl_conf = "/etc/nccl.conf";
  std::filesystem::path expect;  // `nccltune check --expect` file; empty: none
  std::string nvml_lib = "libnvidia-ml.so.1", nccl_lib = "libnccl.so.2", cuda_lib = "libcuda.so.1";

  friend bool operator==(const DaemonConfig&, const DaemonConfig&) = default;
};

// Empty text, or text without a `daemon:` section, gives the defaults.
Result<DaemonConfig> parse_daemon_config(std::string_view yaml_text, std::string_view origin);
// A missing file gives the defaults; an unreadable one is an error.
Result<DaemonConfig> read_daemon_config(const std::filesystem::path& file);

// "90s", "5m", "1h30m": 1 second to 1 day.
Result<std::chrono::seconds> parse_interval(std::string_view text);

}  // namespace nccltune
