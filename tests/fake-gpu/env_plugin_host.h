// The fake NCCL's side of NCCL's env plugin interface, as NCCL 2.28.9 runs it (src/plugin/env.cc,
// src/plugin/plugin_open.cc, src/misc/param.cc; tests/fake-gpu/README.md, "Env plugins"): once per
// process, at the first variable NCCL reads, NCCL_ENV_PLUGIN (read with getenv) names the library
// (a path or file name as dlopen takes it, else "X" -> libnccl-env-X.so; unset: libnccl-env.so;
// "none": none), its table is ncclEnvPlugin_v2, else ncclEnvPlugin_v1, and init runs with NCCL's
// version; from then on every variable NCCL reads comes from the plugin's getEnv. Without a
// plugin, NCCL's internal one answers getenv. An init that fails fails NCCL's init.
#pragma once

#include <string>
#include <vector>

#include "nccl_env.h"

namespace nccltune::fake {

struct EnvPluginLine {
  bool warning = false;
  std::string text;
};

struct PluginEnv {
  NcclEnv env;  // every NCCL_* variable NCCL reads (nccl_variables.h) and the process has, as getEnv answers
  bool init_failed = false;
  // NCCL's INFO lines about the load and the plugin's own log lines, from the process's first call
  // only (NCCL prints them once).
  std::vector<EnvPluginLine> lines;
};

// `nccl_version`: the NCCL this fake is (the model's nccl_version, 22809), handed to init; from
// 23007 (2.30.7) on, the v2 table is looked up first.
// `environment`: the process's environ. With NCCLTUNE_EMULATE_NODES=N, an external plugin sees
// OMPI_COMM_WORLD_LOCAL_SIZE as Open MPI sets it on N nodes (OMPI_COMM_WORLD_SIZE / N): what a
// launcher would say on the nodes the fake emulates.
PluginEnv read_nccl_env_through_plugin(char** environment, int nccl_version);

}  // namespace nccltune::fake
