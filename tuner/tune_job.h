// `nccltune tune` as one MPI job: one rank per node reads that node's topology, rank 0 builds
// the ClusterShape, runs the strategy and sends each trial to every rank; each finished trial is
// journaled; the profile is written atomically to <out>/<shape key>/<nodes>n.yaml.
#pragma once

#include <string>
#include <vector>

#include "mpi_session.h"
#include "strategy.h"
#include "tune_console.h"

namespace nccltune {

struct TuneOptions {
  std::string space_file;      // empty: the built-in configs/search-space.yaml
  std::string out_dir = "profiles";
  std::string journal;         // empty: <out>/journal.jsonl
  bool resume = false;
  std::string from;            // topology source for every node (snapshot, nvidia-smi:, hwloc:)
  bool allow_mixed = false;
  std::string cuda_lib, nccl_lib;
  StrategyOptions strategy;
  double init_timeout_s = 120;
  double size_timeout_s = 60;
  std::size_t max_bytes_per_size = 1u << 30;
  ProgressStyle progress = ProgressStyle::automatic;
  std::vector<std::string> argv;
};

// Every rank calls it; returns the process exit code (0: a profile was written).
int run_tune_job(MpiSession& mpi, const TuneOptions& options);

}  // namespace nccltune
