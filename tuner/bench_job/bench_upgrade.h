// `nccltune bench --nccl-lib NEW --baseline-nccl-lib OLD` (docs/ARCHITECTURE.md, "Before an NCCL
// upgrade"): rounds of fresh workers interleaved OLD, NEW, OLD, NEW... over bench's sizes and
// collectives, every rank of a round on one library; with --profile, each library also under the
// profile's env and nccltune's tuner plugin. Rank 0 prints the comparison
// (upgrade/upgrade_comparison.h) and writes its JSON.
#pragma once

#include <string>

#include "mpi_runtime/mpi_session.h"
#include "mpi_runtime/trial_runner.h"

namespace nccltune {

struct UpgradeBenchRequest {
  TrialSpec spec;  // bench's trial: sizes, collectives, the user's NCCL_* env, timeouts
  std::string new_lib, old_lib;
  int rounds = 3;
  double max_regression_percent = 3;
  std::string profile_path;  // --profile; empty without
  std::string json_path;     // -J; empty without
};

// Every rank calls it after bench checked its options (--max-regression, --rounds) and loaded NEW.
// Exit 3 when OLD cannot be loaded or has no ncclGetVersion, the ranks load different libraries
// (their versions differ) or the profile cannot be read; 1 when a trial failed or a size
// regresses beyond --max-regression and the noise; else 0.
int run_upgrade_bench(MpiSession& mpi, const UpgradeBenchRequest& request);

}  // namespace nccltune
