// `nccltune bench` as one MPI job: every rank starts the MPI session, builds its trial from the
// options, loads the CUDA driver and NCCL before any worker, runs the trial (one worker process
// per rank, tuner/mpi_runtime/trial_runner.h) and rank 0 prints nccl-tests' table, the peak line,
// what NCCL's log said (--nccl-log) and writes the JSON. With --baseline-nccl-lib the job is the
// upgrade check (bench_job/bench_upgrade.h) on the same session and trial. The command line is
// cli/bench_command.cpp's; this is what runs once it is parsed.
#pragma once

#include <string>
#include <vector>

#include "topology/sources/topology_reader.h"
#include "upgrade/upgrade_comparison.h"

namespace nccltune {

// bench's exit status for bad input (a flag, a library that does not load), where 1 and 2 are
// its verdicts: 1 a failed trial, wrong data or a busbw below a threshold, 2 a threshold that
// cannot be judged (README, "Exit codes").
constexpr int kBenchInputError = 3;

struct BenchJobOptions {
  std::string min_bytes = "32M", max_bytes = "32M", step_bytes = "1M";
  double step_factor = 1;
  int iterations = 20, warmup = 5, check = 1, root = 0;
  int average = 1;            // -a: 0 rank 0, 1 mean over ranks (nccl-tests' default), 2 min, 3 max
  int gpus = 1, threads = 1;  // -g, -t: nccl-tests' GPUs per thread and threads per process
  std::string type = "float", redop = "sum", collective = "all_reduce";
  std::string json_path;
  std::string cuda_lib, nccl_lib;
  double init_timeout_s = 120, size_timeout_s = 60;
  int repeat = 1;    // hidden: N trials in one job, each one's wall time on rank 0 (bench/trial_overhead.sh)
  std::string from;  // the node the peak is computed for; empty: this machine
  ReadOptions read_options;
  double min_busbw = -1, min_peak_percent = -1;  // health thresholds; negative: not given
  bool nccl_log = false;  // run NCCL with NCCL_DEBUG=INFO and print what explain reads from it
  std::vector<std::string> argv;
  // The upgrade check (bench_job/bench_upgrade.h): OLD, and what it takes besides.
  std::string baseline_nccl_lib;
  std::string ops;  // --ops all_reduce,all_gather: several collectives, with --baseline-nccl-lib
  int rounds = 3;
  double max_regression_percent = kDefaultMaxRegressionPercent;
  std::string profile;
  // What the command line got wrong that its parser saw (a flag bench refuses, the upgrade
  // check's flags without --baseline-nccl-lib...), and why --from cannot be read: rank 0 says
  // the first once the session is up, the flag's before the other options', --from's after them.
  std::string flag_problem;
  std::string from_problem;
};

// Every rank calls it with the process's argc and argv (MPI_Init's); returns the exit status.
int run_bench_job(const BenchJobOptions& options, int* argc, char*** argv);

}  // namespace nccltune
