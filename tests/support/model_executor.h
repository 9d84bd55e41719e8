// A TrialExecutor that answers the strategy's trials from a fake GPU model (tests/fake-gpu/),
// the way the real stack would (worker processes loading libfakenccl), without processes:
// the NCCL_* environment is read as the fake NCCL reads it, each rank's communicator is resolved
// from the model, a fault becomes the TrialOutcome the trial runner would report, and each
// size's time is the slowest rank's mean over the timed iterations, with the model's noise.
//
// Noise is deterministic per (model seed, env, phase, repeat, grid, iterations): measuring the
// same config again (another repeat or phase) gives other but reproducible numbers.
//
// duration_s is synthetic (kTrialFixedCost_s + sizes x (warmup + iterations) x kPerOpCost_s,
// more for a hang: the timeout), so budget logic can be exercised with clock() as the
// strategy's injected clock: it advances by each trial's duration.
//
// Also the exhaustive grid the strategy is compared with: every knob of a search space either
// unset (NCCL's default) or one of its values, and the noiseless objective of any env.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fake_model.h"
#include "search/objective.h"
#include "search/search_space.h"
#include "search/strategy.h"

namespace nccltune::test_support {

inline constexpr double kTrialFixedCost_s = 0.05;
inline constexpr double kPerOpCost_s = 1e-4;
inline constexpr double kHangCost_s = 60;  // a hang costs the trial runner's timeout
inline constexpr double kCrashCost_s = 0.5;

// What the model does with one env at one size, without noise.
struct ModelPoint {
  double time_us = 0;       // the slowest rank's time of one op
  double busbw = 0;         // GB/s
  std::string algo, proto;  // the pair NCCL (the fake) chooses
};

// Counters shared by every copy of a ModelExecutor.
struct ModelExecutorStats {
  int trials = 0;
  double simulated_s = 0;  // sum of duration_s: what clock() reads
  double wall_s = 0;       // real time spent inside the executor
};

// Models with a `nodes` section are taken at the communicator's node count (fake_model.h's
// model_for_nodes): the executor at `nodes`; the free functions below take a model already
// resolved so (model_for_nodes), or the top level.
class ModelExecutor {
 public:
  // `nodes` 0: the count `model` was resolved for (fake::FakeModel::for_nodes).
  ModelExecutor(const fake::FakeModel& model, int nranks, int nodes = 0);

  TrialMeasurement operator()(const TrialRequest& request) const;
  // A TrialExecutor sharing this executor's counters (copies of it share them too).
  TrialExecutor executor() const;
  // Seconds of simulated trial time so far: StrategyOptions::clock_s.
  std::function<double()> clock() const;
  const ModelExecutorStats& stats() const { return *stats_; }
  void reset_stats() const { *stats_ = {}; }

  const fake::FakeModel& model() const { return *model_; }
  int nranks() const { return nranks_; }

 private:
  std::shared_ptr<const fake::FakeModel> model_;
  int nranks_ = 1;
  std::shared_ptr<ModelExecutorStats> stats_;
};

TrialExecutor make_model_executor(const fake::FakeModel& model, int nranks, int nodes = 0);

// The fault outcome of `env` (nullopt when the trial would run), with the reason in `reason`.
// A trial of several collectives faults with the worst of their faults.
std::optional<TrialOutcome> model_fault(const fake::FakeModel& model, const Env& env, int nranks,
                                        std::string* reason = nullptr,
                                        const std::vector<std::string>& ops = {kAllReduce});

// Noiseless behaviour of `env` at `bytes` of `op` (nullopt on a fault).
std::optional<ModelPoint> model_point(const fake::FakeModel& model, const Env& env, int nranks,
                                      std::uint64_t bytes, const std::string& op = kAllReduce);

// The noiseless score of `env` against NCCL's defaults (the empty env) over every size of every
// collective of `ops` (the points of trial.h); nullopt when `env` or the defaults fault.
std::optional<Score> model_score(const fake::FakeModel& model, const Env& env, int nranks,
                                 const std::vector<std::uint64_t>& sizes, Objective objective,
                                 double tolerance, const std::vector<std::string>& ops = {kAllReduce});
// model_score's value when the env is a valid choice (runs and no point loses more than the
// tolerance), else 0: the number the exhaustive grid maximises. The defaults give 1.
double model_objective(const fake::FakeModel& model, const Env& env, int nranks,
                       const std::vector<std::uint64_t>& sizes, Objective objective, double tolerance,
                       const std::vector<std::string>& ops = {kAllReduce});

// The full cross product of `space`: each knob unset (its default) or one of its values.
std::vector<Env> grid_configs(const SearchSpace& space);
// Its size, without enumerating it (saturates at UINT64_MAX).
std::uint64_t grid_size(const SearchSpace& space);

// The names of the variables `model` reacts to: those in its effects, faults and requires, plus
// those the fake NCCL reads whatever a model says (NCCL_ALGO, NCCL_PROTO, the channel and CTA
// bounds, NCCL_NVLS_ENABLE, NCCL_NVLS_NCHANNELS, NCCL_PAT_ENABLE). Any other variable changes
// nothing the model computes.
std::vector<std::string> model_variables(const fake::FakeModel& model);

// One knob's choices in the reduced grid: nullopt = unset.
struct KnobChoices {
  std::string name;
  std::vector<std::optional<std::string>> choices;
};

// The cross product whose best is the best of the full grid_configs(space), for `model`:
//  1. knobs the model does not react to (model_variables) are left unset: they change nothing;
//  2. a choice (value or unset) that a fatal fault (init_error, hang, crash, corrupt) with a
//     one-variable condition matches is dropped: every config with it fails, objective 0;
//  3. a "simple" knob (none the fake NCCL reads whatever a model says, in no `requires`, in no
//     condition of two or more variables, in no slow_rank fault) acts only through one-variable
//     effects, i.e. a factor on busbw_scale and one on lat_scale that do not depend on any other
//     knob. Every pair's time falls as busbw_scale rises and lat_scale falls, and the pair that
//     is chosen (the default table's, or the fastest allowed) does not get slower either, so a
//     choice whose factors are no better than another's on both counts is dominated at every size:
//     only the non-dominated choices (equal ones once) are kept.
// The best of what is left is therefore the best of the full grid.
std::vector<KnobChoices> reduced_grid(const SearchSpace& space, const fake::FakeModel& model);
// The same over several collectives, each under its own model. When some collective has effects,
// faults or algorithms of its own, a choice dominated for one may be the best for another, so
// only steps 1 and 2 apply (step 2 for a fault of any collective); else reduced_grid(space, model).
std::vector<KnobChoices> reduced_grid(const SearchSpace& space, const fake::FakeModel& model,
                                      const std::vector<std::string>& ops);
std::uint64_t reduced_grid_size(const std::vector<KnobChoices>& grid);

struct GridBest {
  Env env;
  double objective = 1;       // the defaults' objective is 1 (0 when they fail)
  std::uint64_t configs = 0;  // how many envs were scored
};
// The best env of reduced_grid(space, model) by model_objective: the best of the full grid.
GridBest grid_best(const fake::FakeModel& model, const SearchSpace& space, int nranks,
                   const std::vector<std::uint64_t>& sizes, Objective objective, double tolerance,
                   const std::vector<std::string>& ops = {kAllReduce});

}  // namespace nccltune::test_support
