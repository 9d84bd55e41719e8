// The search (docs/ARCHITECTURE.md, "Search"): NCCL's defaults measured several times for the noise floor,
// one knob at a time, a cross of the knobs that matter (a crossed env that fails is tried again
// with a knob's next value that beat the noise) and of NCCL_ALGO x NCCL_PROTO, successive halving
// with more sizes and iterations, the NCCL_ALGO x NCCL_PROTO pairs again under the finalist's
// other settings (they can move the crossovers; this gives the best pair per size), then an
// interleaved A/B confirmation against the defaults. Trials run through a TrialExecutor, so
// the strategy is pure of processes and MPI and runs the same against a model in benchmarks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/objective.h"
#include "search/search_space.h"
#include "search/trial.h"
#include "search/trial_counts.h"

namespace nccltune {

struct StrategyOptions {
  // What every trial measures and the score spans (trial.h's points). Guards are measured by the
  // defaults' repeats and the A/B confirmation only: a winner that slows one of them at any size
  // beyond the tolerance is not confirmed, but they do not steer the search.
  std::vector<std::string> collectives{kAllReduce};
  std::vector<std::string> guards;
  // The communicators every trial measures them on (tune --comms, world first): each collective on
  // each is a ShapedOp of its own, scored alike, with per-size choices of its own.
  std::vector<CommRole> comms{CommRole::world};
  // NCCL 2.24+ reads NCCL_ALGO / NCCL_PROTO per collective ("allreduce:Tree;allgather:Ring"): the
  // pair-derived candidate may then give each tuned collective its own list.
  bool scoped_lists = false;
  // A node count after the first of tune --node-counts: the settings carried from the largest count
  // (its transport winners, whose effect does not depend on the node count) are screened as one
  // candidate and crossed with the rest, and the NCCL_ALGO x NCCL_PROTO pairs are measured under
  // them; with screen_algo_proto_singly false, NCCL_ALGO and NCCL_PROTO are searched as pairs only.
  Env carried;
  bool screen_algo_proto_singly = true;
  // Pair mode (trial.h): the NCCL_ALGO x NCCL_PROTO pairs of one env are measured in one worker
  // run, each forced through nccltune's tuner plugin, instead of one env trial per pair. Only
  // when the tuned NCCL has tuner API v3+ (2.22) and the plugin loads: tune's probe decides.
  // NCCL_ALGO and NCCL_PROTO are then not screened one value at a time either: the cross
  // measures every pair, and the list it derives is their candidate.
  bool pair_mode = false;
  // Pair mode: the pairs of one env are measured in this many worker runs (one communicator each)
  // and judged on the median of each point, so that one run's noise does not pick a pair. The
  // per-size choices are measured apart from the cross on the final grid: in the halving's runs
  // of each candidate (after the candidate's own measurement, in its communicator), then in
  // per-size runs until the shipped env's pairs have this many.
  int pair_rounds = 3;
  Objective objective = Objective::balanced;
  double tolerance = 0.02;
  SizeGrid screen_grid{8, 64u << 20, 8};
  SizeGrid final_grid{8, 64u << 20, 4};
  int screen_iterations = 5;
  int final_iterations = 20;
  int warmup = 2;
  int baseline_repeats = 3;
  int confirm_rounds = 3;
  int halving_candidates = 6;
  int cross_knobs = 5;
  int max_trials = 0;  // 0: no limit
  std::chrono::seconds budget{30 * 60};
  std::function<double()> clock_s;  // seconds since some start; steady clock if empty
};

struct StrategyProgress {
  int env_trial = 0;  // this trial's number (trial_counts.h: a run of fresh workers)
  int trial = 0;      // measurements so far, in the budget's unit: trials and pairs
  int planned = 0;
  TrialPhase phase = TrialPhase::baseline;
  double elapsed_s = 0;
  double eta_s = 0;
  double best_gain = 0;  // best score so far over the defaults, 1.0 = same
};
using ProgressCallback =
    std::function<void(const StrategyProgress&, const TrialRequest&, const TrialMeasurement&)>;

struct StrategyResult {
  Env env;  // empty when the defaults are kept
  bool keep_defaults = true;
  // The confirmation's points (trial.h): the final grid for each collective and guard.
  std::vector<ShapedOp> ops;
  std::vector<std::uint64_t> sizes;
  std::vector<double> baseline_busbw, tuned_busbw;
  Score score;
  double noise = 0;
  std::string confirmation;
  std::vector<std::string> notes;  // restrictions left out of env, and why (shippable_env.h)
  // Per tuned collective on each communicator, the fastest measured (algo, proto) at each size of
  // the final grid that `env` allows, measured under `env`'s other settings; empty when the budget
  // ended those measurements early.
  std::map<ShapedOp, std::vector<SizeChoice>> per_size;
  // Per ShapedOp, where its per_size choice changes between two measured sizes (profile.h): the
  // range of the choice at `hi` starts at `bytes` (profile_builder.h), not at `hi`.
  std::map<ShapedOp, std::vector<SizeSwitch>> switches;
  // The budget's unit (--max-trials): a trial counts one, a pair-mode trial one per pair.
  int trials = 0, failed_trials = 0, cached_trials = 0;
  TrialCounts counts;  // what the summary and the profile say (trial_counts.h)
  // Start-up cost of the trials measured (not those from the journal): worker processes started,
  // communicators created, and pairs measured in-process (pair mode).
  int workers = 0, communicators = 0, pairs_in_process = 0;
  std::vector<FailedTrial> failed;
  std::string error;  // set when even NCCL's defaults cannot run; nothing else is valid then
};

StrategyResult run_strategy(const SearchSpace& space, const StrategyOptions& options,
                            const TrialExecutor& execute, const ProgressCallback& progress = {});

}  // namespace nccltune
