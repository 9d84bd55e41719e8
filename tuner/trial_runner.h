// One trial on every rank: each MPI rank's parent spawns its worker, rank 0's worker makes the
// NCCL unique id and the parents broadcast it, results stream back under an init timeout and a
// per-size timeout, and all ranks agree on one outcome and one set of numbers.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rank_group.h"
#include "worker_protocol.h"

namespace nccltune {

enum class TrialOutcome { ok, wrong_data, timeout, init_error, crash };
std::string_view to_string(TrialOutcome outcome);

struct TrialSpec {
  std::string worker_executable;  // nccltune-worker, or this binary run as `<exe> worker`
  std::vector<std::string> worker_args = {"worker"};
  std::map<std::string, std::string> env;  // the trial's variables (NCCL_* and others)
  WorkerConfig config;  // rank, nranks and device are set per rank by run_trial's caller
  std::chrono::milliseconds init_timeout{120000};
  std::chrono::milliseconds size_timeout{60000};
};

struct TrialResult {
  TrialOutcome outcome = TrialOutcome::ok;
  std::string reason;  // from the first rank whose own outcome is the agreed one
  // Per size: the slowest rank's time, wrong elements summed over ranks.
  std::vector<SizeMeasurement> sizes;
  // This rank's worker's view.
  DeviceDescription device;
  int nccl_version = 0;
  int cuda_driver = 0;
};

// --cuda-lib / --nccl-lib when given, else $NCCLTUNE_CUDA_LIB / $NCCLTUNE_NCCL_LIB, else the
// system's library name.
std::string choose_library(const std::string& flag, const char* env_variable, const char* fallback);

// The lean `nccltune-worker` installed beside the running binary (fewer libraries to load, so
// cheaper trials), else the running binary itself with the `worker` subcommand.
void use_installed_worker(TrialSpec& spec);

// Every rank of `group` calls this with the same spec (its own rank and device in config).
TrialResult run_trial(RankGroup& group, const TrialSpec& spec);

}  // namespace nccltune
