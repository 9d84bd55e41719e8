// The NCCL env plugin ABI, as NCCL defines it (src/include/plugin/env/env_v1.h since 2.28.7, and
// env_v2.h since 2.30.7): the tables NCCL looks up as ncclEnvPlugin_v1 (every release to
// 2.30.4, src/plugin/env/env_v1.cc) and, from 2.30.7, ncclEnvPlugin_v2 first
// (src/plugin/env/env_v2.cc: init also gets NCCL's logger). The struct layouts are NCCL's;
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
