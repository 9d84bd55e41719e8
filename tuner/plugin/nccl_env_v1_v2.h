// The NCCL env plugin ABI, as NCCL 2.28.9 defines it (plugins/env/example/nccl/env_v1.h and
// env_v2.h; NCCL 2.28.7 introduced the plugin): the tables NCCL looks up as ncclEnvPlugin_v2,
// then ncclEnvPlugin_v1 (src/plugin/env/env_v2.cc, env_v1.cc). The struct layouts are NCCL's;
// nothing else of NCCL is included. NCCL calls init once per process (the first ncclGetEnv,
// src/plugin/env.cc), then getEnv for every variable it reads; a string getEnv returns must stay
// valid until finalize or the next getEnv of the same name; finalize runs at exit.
#pragma once

#include <cstdint>

#include "plugin/nccl_tuner_common.h"

namespace nccltune::nccl_abi {

struct ncclEnv_v1_t {
  const char* name;
  ncclResult_t (*init)(std::uint8_t ncclMajor, std::uint8_t ncclMinor, std::uint8_t ncclPatch,
                       const char* suffix);
  ncclResult_t (*finalize)(void);
  const char* (*getEnv)(const char* name);
};

struct ncclEnv_v2_t {
  const char* name;
  ncclResult_t (*init)(std::uint8_t ncclMajor, std::uint8_t ncclMinor, std::uint8_t ncclPatch,
                       const char* suffix, ncclDebugLogger_t logFunction);
  ncclResult_t (*finalize)(void);
  const char* (*getEnv)(const char* name);
};

}  // namespace nccltune::nccl_abi
