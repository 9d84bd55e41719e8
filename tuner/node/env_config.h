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

// env.inspector: how a job gets NCCL Inspector (NVIDIA's profiler plugin, whose records `nccltune
// observe` reads) when it asks for it (inspector_env.h). Profiling costs a job time, so it is off
// unless `plugin` is set, and then on only for the jobs that ask (or every job with jobs: all).
enum class InspectorOutput { json, prometheus };
struct InspectorConfig {
  std::string plugin;    // absolute path of libnccl-profiler-inspector.so; "" : off
  std::string dump_dir;  // json: each job writes into <dump_dir>/<job id>; prometheus: here, as is
  InspectorOutput output = InspectorOutput::json;
  int interval_s = 0;      // 0: json at teardown only, prometheus every 30 s (Inspector's minimum)
  bool every_job = false;  // jobs: all (default opt-in: NCCLTUNE_INSPECTOR=1 or env --inspector)
  bool enabled() const { return !plugin.empty(); }
};

struct EnvConfig {
  std::filesystem::path store = std::string(kDefaultProfileStore);  // profile store root
  bool prefer_below = true;              // nearest tuned node count when no exact match: below, else above
  std::vector<std::string> allow_names;  // extra env names to emit, each ^[A-Z][A-Z0-9_]*$
  // The env plugin serves a profile to a job whose NCCL has the profile's major.minor, or, when
  // both versions lie in this range, another one; "" (none): the same major.minor only.
  std::optional<NcclVersionRange> nccl_compatible;
  InspectorConfig inspector;
};

// Empty text, or text without an `env:` section, gives the defaults.
Result<EnvConfig> parse_env_config(std::string_view yaml_text, std::string_view origin);
// A missing file gives the defaults, unless it was named (`--config FILE`, $NCCLTUNE_CONFIG): then
// it is an error; an unreadable one is always an error.
Result<EnvConfig> read_env_config(const std::filesystem::path& file, bool named = false);

}  // namespace nccltune
