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

namespace nccltune {

struct StrategyOptions {
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
  int trial = 0;
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
  std::vector<std::uint64_t> sizes;  // the final grid
  std::vector<double> baseline_busbw, tuned_busbw;
  Score score;
  double noise = 0;
  std::string confirmation;
  std::vector<std::string> notes;  // restrictions left out of env, and why (shippable_env.h)
  // The fastest measured (algo, proto) at each size of `sizes` that `env` allows, measured under
  // `env`'s other settings; empty when the budget ended those measurements early.
  std::vector<SizeChoice> per_size;
  int trials = 0, failed_trials = 0, cached_trials = 0;
  std::vector<FailedTrial> failed;
  std::string error;  // set when even NCCL's defaults cannot run; nothing else is valid then
};

StrategyResult run_strategy(const SearchSpace& space, const StrategyOptions& options,
                            const TrialExecutor& execute, const ProgressCallback& progress = {});

}  // namespace nccltune
