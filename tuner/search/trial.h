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
};

// The algorithm and protocol NCCL itself chose for one size, as its TUNING log lines say.
struct NcclChoice {
  std::string algo, proto;  // NCCL's spelling: "Ring", "Simple"
  friend bool operator==(const NcclChoice&, const NcclChoice&) = default;
};

// A trial's numbers are points, one per (collective, size): each of the request's collectives in
// turn, over its sizes in ascending order. With one collective, a point is a size.
struct TrialMeasurement {
  TrialOutcome outcome = TrialOutcome::ok;
  std::string reason;
  std::vector<std::string> ops;  // per point, the collective (nccl-tests name)
  std::vector<std::uint64_t> sizes;
  std::vector<double> time_us;  // per point, the slowest rank
  std::vector<double> busbw;    // per point, GB/s with the collective's own busbw factor
  // Per point, what NCCL chose; empty when NCCL's account was not read for this trial.
  std::vector<std::optional<NcclChoice>> nccl_choices;
  double duration_s = 0;
  bool cached = false;  // taken from the journal, not measured now
};

using TrialExecutor = std::function<TrialMeasurement(const TrialRequest&)>;

// The points of `m` whose collective is one of `ops`, in their order; outcome and the rest kept.
TrialMeasurement points_of(const TrialMeasurement& m, const std::vector<std::string>& ops);

}  // namespace nccltune
