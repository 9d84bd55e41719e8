// One trial on every rank: each MPI rank's parent spawns its worker, rank 0's worker makes the
// NCCL unique id and the parents broadcast it, results stream back under an init timeout and a
// per-size timeout, and all ranks agree on one outcome and one set of numbers.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectives/worker_process.h"
#include "collectives/worker_protocol.h"
#include "mpi_runtime/rank_group.h"
#include "profile/trial_outcome.h"

namespace nccltune {

// How the ranks' times of one size become the trial's time, as nccl-tests' -a chooses: rank 0's
// own, the mean over ranks (nccl-tests' default), the fastest or the slowest rank's. tune scores
// the slowest rank: a collective ends for everyone when its last rank is done.
enum class TimeRule { rank0, average, min, max };
std::string_view to_string(TimeRule rule);  // "rank0", "avg", "min", "max"

// NCCLTUNE_DISABLE=1: nccltune's env plugin serves this process nothing, should NCCL load it (as
// libnccl-env.so, or NCCL_ENV_PLUGIN in a node's nccl.conf). Tune and fleet set it for their
// workers, which measure the settings they are given and nothing else.
inline constexpr const char* kProfileOffVariable = "NCCLTUNE_DISABLE";

struct TrialSpec {
  std::vector<std::string> worker_command = installed_worker_command();  // argv before the worker's own
  std::map<std::string, std::string> env;  // the trial's variables (NCCL_* and others)
  WorkerConfig config;                     // rank, nranks and device are set per rank by run_trial's caller
  std::chrono::milliseconds init_timeout{120000};
  std::chrono::milliseconds size_timeout{60000};
  TimeRule time_rule = TimeRule::max;
};

struct TrialResult {
  TrialOutcome outcome = TrialOutcome::ok;
  std::string reason;  // from the first rank whose own outcome is the agreed one
  // Per size: the ranks' times combined by the spec's time_rule, wrong elements summed over ranks.
  // The config's collectives one after another, each over its sizes; ops[i] names sizes[i]'s.
  std::vector<SizeMeasurement> sizes;
  std::vector<std::string> ops;
  // Per size, the communicator it ran on ("world", "rail", "node": config.comms), every rank's
  // time of it combined as the others' (the slowest rank: every rail runs at once, so the
  // slowest rail counts). `communicators`: how many the worker made (the world and its splits).
  std::vector<std::string> comms;
  int communicators = 1;
  // Pair mode (config.pairs): per size, the index of its pair, and whether NCCL did not offer
  // that pair there on some rank. Wrong elements then fail only their pair (the caller's
  // reading), not the trial. Empty otherwise.
  std::vector<int> pairs;
  std::vector<int> unavailable;  // 0 or 1
  // Service counting (config.count_service): per size, 1 when the tuner plugin served its
  // profile's choice to every call of every rank and was asked at least once on each, else 0;
  // `declined_why`: the plugin's reason on the lowest rank that gave one. Empty otherwise.
  std::vector<int> served;
  std::string declined_why;
  // This rank's worker's view.
  DeviceDescription device;
  int nccl_version = 0;
  int cuda_driver = 0;
};

// What every trial of this rank in `group` starts from: its rank and size there, its node-local
// device, the CUDA and NCCL libraries (the flags, else the environment's: choose_libraries) and
// the timeouts. The caller adds what it measures (config.sweep, config.collectives, env).
TrialSpec rank_trial_spec(const RankGroup& group, int local_rank, const std::string& cuda_lib,
                          const std::string& nccl_lib, double init_timeout_s, double size_timeout_s);

// Every rank of `group` calls this with the same spec (its own rank and device in config).
TrialResult run_trial(RankGroup& group, const TrialSpec& spec);

// How a trial runs on every rank: run_trial, or a stand-in in tests.
using TrialRunner = std::function<TrialResult(RankGroup& group, const TrialSpec& spec)>;

}  // namespace nccltune
