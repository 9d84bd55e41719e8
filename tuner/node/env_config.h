// The `env:` section of the node-level config /etc/nccltune/nccltune.yaml (every key documented in
// configs/nccltune.yaml), read by `nccltune env` and by nccltuned when it resolves profiles. Other
// top-level sections (daemon:) belong to other readers and are skipped; unknown keys inside
// `env:` are errors naming file:line and key.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

inline constexpr std::string_view kDefaultProfileStore = "/shared/nccltune/profiles";

// NCCL versions as major * 100 + minor (2.28 -> 228), both ends included.
struct NcclVersionRange {
  int low = 0, high = 0;
  bool holds(int major_minor) const { return low <= major_minor && major_minor <= high; }
};

struct EnvConfig {
  std::filesystem::path store = std::string(kDefaultProfileStore);  // profile store root
  bool prefer_below = true;              // nearest tuned node count when no exact match: below, else above
  std::vector<std::string> allow_names;  // extra env names to emit, each ^[A-Z][A-Z0-9_]*$
  // The env plugin serves a profile to a job whose NCCL has the profile's major.minor, or, when
  // both versions lie in this range, another one; "" (none): the same major.minor only.
  std::optional<NcclVersionRange> nccl_compatible;
};

// Empty text, or text without an `env:` section, gives the defaults.
Result<EnvConfig> parse_env_config(std::string_view yaml_text, std::string_view origin);
// A missing file gives the defaults, unless it was named (`--config FILE`, $NCCLTUNE_CONFIG): then
// it is an error; an unreadable one is always an error.
Result<EnvConfig> read_env_config(const std::filesystem::path& file, bool named = false);

}  // namespace nccltune
