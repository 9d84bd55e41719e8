// The `env:` section of the node-level config /etc/nccltune/nccltune.yaml (every key documented in
// configs/nccltune.yaml), read by `nccltune env` and by nccltuned when it resolves profiles. Other
// top-level sections (daemon:) belong to other readers and are skipped; unknown keys inside
// `env:` are errors naming file:line and key.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

inline constexpr std::string_view kDefaultProfileStore = "/shared/nccltune/profiles";

struct EnvConfig {
  std::filesystem::path store = std::string(kDefaultProfileStore);  // profile store root
  bool prefer_below = true;              // nearest tuned node count when no exact match: below, else above
  std::vector<std::string> allow_names;  // extra env names to emit, each ^[A-Z][A-Z0-9_]*$
};

// Empty text, or text without an `env:` section, gives the defaults.
Result<EnvConfig> parse_env_config(std::string_view yaml_text, std::string_view origin);
// A missing file gives the defaults, unless it was named (`--config FILE`, $NCCLTUNE_CONFIG): then
// it is an error; an unreadable one is always an error.
Result<EnvConfig> read_env_config(const std::filesystem::path& file, bool named = false);

}  // namespace nccltune
