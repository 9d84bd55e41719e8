// `nccltune fleet` on every rank: each node alone (all nodes at once), then rounds of disjoint
// node pairs (all pairs of a round at once), each group a trial of its own communicator. Rank 0
// plans each round, holds one summary per group, and writes the survey.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "fleet/fleet_survey.h"
#include "mpi_runtime/node_layout.h"
#include "mpi_runtime/rank_group.h"
#include "mpi_runtime/trial_runner.h"

namespace nccltune {

enum class FleetFormat { text, json, slurm_drain };

struct FleetOptions {
  std::string collective = "all_reduce";
  std::uint64_t bytes = 1ull << 30;   // --bytes: the bandwidth size
  std::uint64_t small_bytes = 8192;   // --small-bytes: the latency size
  int repeats = 3;                    // --repeats: measurements per group, for the noise
  int iterations = 20;                // timed iterations per size and repeat (nccl-tests' -n)
  std::string rounds;                 // --rounds: "" (default), "all" or a count
  FleetThresholds thresholds;
  FleetFormat format = FleetFormat::text;
  std::string out;                    // --out: the survey's JSON is also written here
  std::string from;                   // --from: topology source(s) for the peak model
  std::chrono::seconds budget{1800};
  double init_timeout_s = 120;
  double size_timeout_s = 60;
  std::string cuda_lib, nccl_lib;
};

// Every rank of `world` calls it; returns the exit code (the same on every rank).
int run_fleet_job(RankGroup& world, const NodeLayout& layout, const FleetOptions& options,
                  const TrialRunner& run = run_trial);

}  // namespace nccltune
