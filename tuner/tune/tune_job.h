// `nccltune tune` as one job of ranks, in steps: a probe trial; every node's type and peaks
// (mpi_runtime/node_gather.h); the ClusterShape and the knobs that apply to it; then rank 0 runs the
// strategy and sends each trial to every rank (tune/trial_protocol.h), journals each finished
// trial (search/journal_replay.h), builds the profile (tune_profile/profile_builder.h), writes it
// atomically to <out>/<node type key>/<nodes>n.yaml and prints `show`'s summary of it.
// The job is given its RankGroup, the ranks' layout on nodes and how one trial runs, so tests
// drive it in one process (SoloGroup and a model) and `tune` under MPI (MpiSession, run_trial).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "mpi_runtime/node_layout.h"
#include "mpi_runtime/rank_group.h"
#include "mpi_runtime/trial_runner.h"
#include "search/strategy.h"
#include "tune/trial_protocol.h"
#include "tune/tune_console.h"

namespace nccltune {

struct TuneOptions {
  std::string space_file;  // empty: the built-in configs/search-space.yaml
  std::string out_dir = "profiles";
  std::string journal;  // empty: <out>/journal.jsonl
  bool resume = false;
  std::string from;  // topology source for every node (snapshot, nvidia-smi:, nvidia-smi-q:, hwloc:)
  // --node-counts (tune_profile/node_count_plan.h); nullopt: the allocation's count and every power
  // of two from 2 below it.
  std::optional<std::vector<int>> node_counts;
  bool allow_mixed = false;
  // --comms (profile/comm_shape.h): the communicator shapes every trial measures, world first;
  // empty: world, rail and node when the job spans more than one node, else the world alone.
  std::vector<std::string> comms;
  // --pair-mode auto: pair mode (StrategyOptions::pair_mode) when the probe finds NCCL >= 2.22
  // and nccltune's tuner plugin loads; false (off): env trials for every pair (the plugin's
  // per-size choices are still confirmed through it).
  bool pair_mode = true;
  // Set by run_tune_job, not a flag: the tuner plugin that pair mode and the confirmation of what
  // the plugin delivers load; empty when it did not load (then neither runs).
  std::string tuner_plugin;
  // Set by run_tune_job: the profile's note on the tuner NCCL loads by default, which the baselines
  // run under (tune/default_tuner_words.h); empty when none.
  std::string default_tuner_note;
  std::string cuda_lib, nccl_lib;
  StrategyOptions strategy;
  double init_timeout_s = 120;
  double size_timeout_s = 60;
  std::size_t max_bytes_per_size = 1u << 30;
  ProgressStyle progress = ProgressStyle::automatic;
};

// Every rank calls it; returns the process exit code (0: a profile was written).
int run_tune_job(RankGroup& group, const NodeLayout& layout, const TuneOptions& options,
                 const TrialRunner& run = run_trial);

}  // namespace nccltune
