#include "search/trial.h"

#include <cmath>

#include "base/size_steps.h"

namespace nccltune {

namespace {

constexpr TrialPhase kPhases[] = {TrialPhase::baseline, TrialPhase::screen,   TrialPhase::cross,
                                  TrialPhase::halving,  TrialPhase::per_size, TrialPhase::confirm};

}  // namespace

std::string_view to_string(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::baseline: return "baseline";
    case TrialPhase::screen: return "screen";
    case TrialPhase::cross: return "cross";
    case TrialPhase::halving: return "halving";
    case TrialPhase::per_size: return "per-size";
    case TrialPhase::confirm: return "confirm";
  }
  return "?";
}

std::optional<TrialPhase> parse_trial_phase(std::string_view name) {
  for (TrialPhase phase : kPhases)
    if (to_string(phase) == name) return phase;
  return std::nullopt;
}

std::uint64_t SizeGrid::aligned_min_bytes() const {
  double size = static_cast<double>(max_bytes);
  if (factor <= 1) return min_bytes;
  while (size / factor >= static_cast<double>(min_bytes)) size /= factor;
  return static_cast<std::uint64_t>(std::llround(size));
}

std::vector<std::uint64_t> grid_sizes(const SizeGrid& grid) {
  return size_steps(grid.aligned_min_bytes(), grid.max_bytes, grid.factor, 0);
}

}  // namespace nccltune
