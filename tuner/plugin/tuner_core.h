// The tuner plugin's one internal version: what every NCCL tuner ABI the plugin exports comes down
// to, as NCCL keeps one internal ncclTuner_t and adapts each plugin ABI to it
// (src/plugin/tuner/tuner_v*.cc). One adapter per ABI (tuner_v4.cpp ... tuner_v7.cpp) holds that
// version's exported table and calls these. Every function here is noexcept and returns
// ncclSuccess: this library runs inside every NCCL application, so a failure is logged through
// NCCL's logger and NCCL's own choices stand.
#pragma once

#include <cstddef>

#include "plugin/cost_table_choice.h"
#include "plugin/nccl_tuner_common.h"

namespace nccltune::tuner_core {

// The name every table carries (NCCL prints it: "TUNER/Plugin: Using nccltune (vN)").
inline constexpr const char* kPluginName = "nccltune";

// init, for every ABI: the communicator's size, NCCL's logger, and how the ABI's cost table names
// its rows and columns, with which the profile's choices are resolved here, once.
struct InitRequest {
  std::size_t ranks = 0, nodes = 0;
  nccl_abi::ncclDebugLogger_t logger = nullptr;
  const CostTableIndices* indices = nullptr;
};
nccl_abi::ncclResult_t init(const InitRequest& request, void** context) noexcept;

// getCollInfo, unchanged from v4 to v7, so every table points here directly.
nccl_abi::ncclResult_t get_coll_info(void* context, nccl_abi::ncclFunc_t collective, std::size_t bytes,
                                     int pipe_ops, float** cost_table, int num_algorithms, int num_protocols,
                                     int reg_buff, int* channels) noexcept;

// getChunkSize (v6, v7): the chunk size the profile measured for the pair NCCL runs, else NCCL's.
nccl_abi::ncclResult_t get_chunk_size(void* context, nccl_abi::ncclFunc_t collective, std::size_t bytes,
                                      int algorithm, int protocol, int channels,
                                      std::size_t* chunk_size) noexcept;

// finalize (v5+) and destroy (v4).
nccl_abi::ncclResult_t finalize(void* context) noexcept;

}  // namespace nccltune::tuner_core
