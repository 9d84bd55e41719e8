// The search (DESIGN.md "Search"): NCCL's defaults measured several times for the noise floor,
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

#include "objective.h"
#include "profile.h"
#include "search_space.h"
#include "trial_runner.h"

namespace nccltune {

using Env = std::map<std::string, std::string>;

// Sizes by a constant factor, ending exactly at max_bytes (the sweep goes up from the aligned
// start, as nccl-tests does, so the largest size is never skipped).
struct SizeGrid {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64u << 20;
  double factor = 2;

  // The smallest max / factor^k that is at least min_bytes.
  std::uint64_t aligned_min_bytes() const;
};
std::vector<std::uint64_t> grid_sizes(const SizeGrid& grid);

struct TrialRequest {
  Env env;
  std::string phase;  // baseline, screen, cross, halving, per-size, confirm
  SizeGrid grid;
  int iterations = 5;
  int warmup = 1;
  int repeat = 0;     // distinguishes repeated measurements of one config (resume matches on it)
};

struct TrialMeasurement {
  TrialOutcome outcome = TrialOutcome::ok;
  std::string reason;
  std::vector<std::uint64_t> sizes;
  std::vector<double> time_us;  // per size, the slowest rank
  std::vector<double> busbw;    // per size, GB/s
  double duration_s = 0;
  bool cached = false;  // taken from the journal, not measured now
};

using TrialExecutor = std::function<TrialMeasurement(const TrialRequest&)>;

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
  int max_trials = 0;                       // 0: no limit
  std::chrono::seconds budget{30 * 60};
  std::function<double()> clock_s;          // seconds since some start; steady clock if empty
};

struct StrategyProgress {
  int trial = 0;
  int planned = 0;
  std::string phase;
  double elapsed_s = 0;
  double eta_s = 0;
  double best_gain = 0;  // best score so far over the defaults, 1.0 = same
};
using ProgressCallback = std::function<void(const StrategyProgress&, const TrialRequest&, const TrialMeasurement&)>;

struct StrategyResult {
  Env env;  // empty when the defaults are kept
  bool keep_defaults = true;
  std::vector<std::uint64_t> sizes;  // the final grid
  std::vector<double> baseline_busbw, tuned_busbw;
  Score score;
  double noise = 0;
  std::string confirmation;
  // The fastest measured (algo, proto) at each size of `sizes` that `env` allows, measured under
  // `env`'s other settings; empty when the budget ended those measurements early.
  std::vector<SizeChoice> per_size;
  int trials = 0, failed_trials = 0, cached_trials = 0;
  std::vector<FailedTrial> failed;
  std::string error;  // set when even NCCL's defaults cannot run; nothing else is valid then
};

StrategyResult run_strategy(const SearchSpace& space, const StrategyOptions& options, const TrialExecutor& execute,
                            const ProgressCallback& progress = {});

// "NCCL_ALGO=Ring NCCL_PROTO=LL" (sorted by name; values may hold commas); "defaults" for an empty env.
std::string describe_env(const Env& env);

}  // namespace nccltune
