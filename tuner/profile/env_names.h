// Which environment variables a profile may set and `env` may print, and which values: the rules
// every reader and writer of a profile shares (the profile parser, the search space, the env
// renderers, the node config's allow_names).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nccltune {

// ^NCCL_[A-Z0-9_]+$, at most 128 characters.
bool is_safe_env_name(std::string_view name);

// 1..1024 characters from [A-Za-z0-9_,.:^=+-]: nothing a shell, an env file or a YAML reader
// would read specially.
bool is_safe_env_value(std::string_view value);
inline constexpr std::string_view kSafeValueCharacters = "[A-Za-z0-9_,.:^=+-]";

// A profile's value for `name`: is_safe_env_value, or for NCCL_ALGO / NCCL_PROTO a list per
// collective (NCCL 2.24: "Ring;allreduce:Tree,Ring;allgather:^NVLS"): entries joined by ';', each
// "<function>:<names>" (allreduce, allgather, reducescatter, broadcast, reduce) or, once, plain
// names, every name NCCL's own (an unknown one fails NCCL 2.24's init); at most 1024 characters. Every
// renderer of such a value quotes it where ';' means something (sh: single quotes); the TaskProlog,
// EnvironmentFile and nccl.conf readers take it literally.
bool is_safe_env_setting(std::string_view name, std::string_view value);

// The one check of a setting a profile serves to jobs (its env and withheld), which every reader
// applies alike (show, env, nccltune-env, the env and tuner plugins, nccltuned), as NCCL
// `nccl_version` reads it (0: the profile does not say; nccl_names.h, profile_nccl_version):
// is_safe_env_name, a variable that NCCL reads (is_known_nccl_variable), is_safe_env_setting,
// NCCL_ALGO / NCCL_PROTO lists as that NCCL parses them (nccl_list_problem) and any other value as
// NCCL reads it (knob_value_problem). What is wrong, in words; nullopt when nothing is.
std::optional<std::string> served_env_problem(std::string_view name, std::string_view value,
                                              int nccl_version);

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

// ^[A-Z][A-Z0-9_]*$, at most 128 characters, and not is_denied_env_name: what an admin may add to
// the node config's env.allow_names.
bool is_allowable_env_name(std::string_view name);

}  // namespace nccltune
