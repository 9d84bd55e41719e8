// The `env:` section of the node-level config /etc/nccltune/nccltune.yaml (every key documented in
// configs/nccltune.yaml), read by `nccltune env` and by nccltuned when it resolves profiles. Other
// top-level sections (daemon:) belong to other readers and are skipped; unknown keys inside
// `env:` are errors naming file:line and key.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "result.h"

namespace nccltune {

inline constexpr std::string_view kDefaultProfileStore = "/shared/nccltune/profiles";

struct EnvConfig {
  std::filesystem::path store = std::string(kDefaultProfileStore);  // profile store root
  bool prefer_below = true;  // nearest tuned node count when no exact match: below, else above
  std::vector<std::string> allow_names;  // extra env names to emit, each ^[A-Z][A-Z0-9_]*$
};

// Empty text, or text without an `env:` section, gives the defaults.
Result<EnvConfig> parse_env_config(std::string_view yaml_text, std::string_view origin);
// A missing file gives the defaults; an unreadable one is an error.
Result<EnvConfig> read_env_config(const std::filesystem::path& file);

// ^[A-Z][A-Z0-9_]*$, at most 128 characters, and not is_denied_env_name: what an admin may add to
// allow_names.
bool is_allowable_env_name(std::string_view name);

// Names never emitted, whatever a profile or allow_names says: those that load code, change the
// dynamic loader or a shell, or make NCCL read or write files. BASH_ENV, ENV, PATH, IFS, PS4,
// CDPATH, SHELLOPTS, BASHOPTS, GLIBC_TUNABLES, LD_* and BASH_FUNC_*; the code-injection variables
// of CUDA and NVTX and of common interpreters (PYTHONPATH, PERL5OPT, NODE_OPTIONS, ...); NCCL 2.28's
// NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN, NCCL_ENV_PLUGIN, NCCL_CONF_FILE,
// NCCL_DEBUG_FILE, NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE, NCCL_GRAPH_FILE, NCCL_GRAPH_DUMP_FILE and
// the plugins' NCCL_TUNER_CONFIG_FILE, NCCL_PROFILE_DUMP_FILE, NCCL_INSPECTOR_DUMP_DIR; and, for
// later NCCL versions (NCCL_GIN_PLUGIN, NCCL_RMA_PLUGIN, NCCL_IBVERBS_LIB,
// NCCL_CHECKPOINT_KVS_PATH), every NCCL_ name ending in _PLUGIN, _FILE, _DIR, _PATH or _LIB.
bool is_denied_env_name(std::string_view name);

}  // namespace nccltune
