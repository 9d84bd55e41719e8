// What the search asks of a trial and what it gets back. The strategy hands TrialRequests to a
// TrialExecutor (tune/ runs them on every MPI rank; tests and benchmarks answer them from a fake
// GPU model), so the search itself starts no process and touches no file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"
#include "profile/trial_outcome.h"

namespace nccltune {

// The step of the strategy a trial belongs to (strategy.h describes each).
enum class TrialPhase { baseline, screen, cross, halving, per_size, confirm };
std::string_view to_string(TrialPhase phase);                        // "baseline", ..., "per-size", "confirm"
std::optional<TrialPhase> parse_trial_phase(std::string_view name);  // nullopt for any other name

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

struct TrialRequest;
// The sizes `request` measures: its explicit sizes, else its grid's.
std::vector<std::uint64_t> request_sizes(const TrialRequest& request);

// An algorithm and protocol pair, in NCCL's spelling: what NCCL chose for one size, as its TUNING
// log lines say, or a pair that pair mode forces.
struct NcclChoice {
  std::string algo, proto;  // NCCL's spelling: "Ring", "Simple"
  friend bool operator==(const NcclChoice&, const NcclChoice&) = default;
};

// Pair mode: the entry of a request's pairs that forces nothing, so NCCL makes its own choice
// under the request's env (the env's own measurement, in the run that also forces the pairs). The
// journal spells it "NCCL/own".
inline const NcclChoice kNcclOwnChoice{"NCCL", "own"};

struct TrialRequest {
  Env env;
  TrialPhase phase = TrialPhase::screen;
  SizeGrid grid;
  int iterations = 5;
  int warmup = 1;
  int repeat = 0;  // distinguishes repeated measurements of one config (resume matches on it)
  // The collectives to measure (nccl-tests names), in this order, each over the grid, in one
  // worker run: the communicator and its NCCL_* settings are the same for all of them.
  std::vector<std::string> collectives{kAllReduce};
  // Pair mode, when not empty: every collective over the grid once per pair, in this order, in
  // one worker run under `env`, each pair forced through nccltune's tuner plugin
  // (collectives/tuner_control.h), but kNcclOwnChoice. One communicator for them all.
  std::vector<NcclChoice> pairs;
  // When not empty: a profile (YAML text) that nccltune's tuner plugin serves to this trial, on
  // top of `env` (the confirmation of what the plugin delivers). Each rank hands it to its worker
  // in a private file (NCCLTUNE_PROFILE), so no shared filesystem is needed.
  std::string plugin_profile;
  // The communicators each collective is measured on, in this order, in the one worker run:
  // "world" (the group), "rail" (one rank per node, every local rank's rail at once) and "node"
  // (the ranks of one node), the last two split from the world (collectives/worker_protocol.h).
  // A request asks for each collective on each of them: its points are their ShapedOps.
  std::vector<std::string> comms{"world"};
  // When not empty, exactly these sizes (ascending, above 0) instead of the grid's: the per-size
  // phase's sizes between two grid points (search/crossover.h) and the confirmation's sizes off the
  // grid (tune_profile/confirmation_sizes.h). A collective measures a size rounded down to its
  // whole elements (per rank for all_gather and reduce_scatter), as nccl-tests does.
  std::vector<std::uint64_t> sizes;
};

// A trial's numbers are points, one per (collective, size): each of the request's collectives in
// turn, over its sizes in ascending order. With one collective, a point is a size.
struct TrialMeasurement {
  TrialOutcome outcome = TrialOutcome::ok;
  std::string reason;
  std::vector<std::string> ops;  // per point, the collective (nccl-tests name)
  // Per point, the communicator it ran on ("world", "rail", "node"); empty: every point's is the
  // world. busbw counts the point's communicator's ranks.
  std::vector<std::string> comms;
  std::vector<std::uint64_t> sizes;
  std::vector<double> time_us;  // per point, the slowest rank
  std::vector<double> busbw;    // per point, GB/s with the collective's own busbw factor
  // Per point, what NCCL chose; empty when NCCL's account was not read for this trial.
  std::vector<std::optional<NcclChoice>> nccl_choices;
  double duration_s = 0;
  bool cached = false;  // taken from the journal, not measured now
  // Pair mode (the request's pairs): the points are each pair's in turn (pair-major); per point,
  // whether NCCL did not offer the pair there (the point's time is then NCCL's own choice's, and
  // means nothing for the pair); per pair, ok or wrong_data (its own data check). `outcome` is
  // the run's: a crash or timeout fails every pair.
  std::vector<int> unavailable;
  std::vector<TrialOutcome> pair_outcomes;
  // Under the plugin with a profile (the request's plugin_profile): per point, 1 when nccltune's
  // tuner plugin served the profile's choice to every call on every rank, else 0 (it declined,
  // or NCCL never asked it; a point no range of the profile covers is 0 too, and claims nothing);
  // and the plugin's reason for declining, when it gave one.
  std::vector<int> plugin_served;
  std::string plugin_declined;
  // What the trial cost in start-up: worker processes started and communicators created, the
  // world and its splits (0 for a trial answered from the journal).
  int workers = 0, communicators = 0;
};

// `m` with no points (its outcome, reason and the rest kept).
TrialMeasurement without_points(const TrialMeasurement& m);

// Appends point `i` of `m` to `out`: its collective, communicator, size, time, busbw, NCCL's
// choice and what the plugin served (each where `m` has it); not `unavailable`, which only pair
// mode's points carry.
void copy_point(const TrialMeasurement& m, std::size_t i, TrialMeasurement& out);

// Pair `pair`'s points of a pair-mode measurement, as a measurement of their own: its outcome
// (the run's when that failed), its points, and `unavailable` for them.
TrialMeasurement pair_points(const TrialMeasurement& m, std::size_t pairs, std::size_t pair);

// How many trials a measurement stands for: one per pair in pair mode, else one.
int trial_count(const TrialRequest& request);

using TrialExecutor = std::function<TrialMeasurement(const TrialRequest&)>;

// The points of `m` whose collective is one of `ops`, in their order; outcome and the rest kept.
TrialMeasurement points_of(const TrialMeasurement& m, const std::vector<std::string>& ops);

// Point `i`'s collective on the communicator it ran on (the world where `m` names none): what the
// search keys a point by, so that each shape's points are its own.
ShapedOp point_op(const TrialMeasurement& m, std::size_t i);
std::vector<ShapedOp> point_ops(const TrialMeasurement& m);  // every point's

}  // namespace nccltune
