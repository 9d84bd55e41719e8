// The per-size phase's switches (search/crossover.h): where two adjacent sizes of the final grid
// have different winners, the switch
// goes where the two pairs' fitted costs cross, and pair mode measures the bracket's
// neighbourhood until it is within a factor of 1.25 or the two pairs are within the noise across
// it. Each gap then becomes a SizeSwitch (profile/profile.h) with its evidence.
//
// The decisions are pure functions; refine_crossovers runs the probes through the function it is
// given, so the search keeps the budget and the tests can hand it a model.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "profile/profile.h"
#include "search/crossover.h"
#include "search/trial.h"

namespace nccltune {

// One gap of the final grid where the fastest pair changes, for one collective on one
// communicator: `below` won at lo, `above` at hi (adjacent final-grid sizes).
struct CrossoverGap {
  ShapedOp op;
  NcclChoice below, above;
  std::uint64_t lo = 0, hi = 0;
  // Both pairs' times of `op` at every size where both have a finite one (pair mode leaves +inf
  // where NCCL did not offer a pair), the whole curve, not only the gap: the fits take neighbours.
  MeasuredTimes below_times, above_times;
};

// The bracket of [lo, hi] where `above` takes over from `below`, from their times: the Crossover
// of locate_crossovers (first = below, second = above) whose bracket lies in [lo, hi]. When the
// winner changes more than once inside (the two are close and the noise flips them), one bracket
// spans the changes, fitted as locate_crossovers fits one. nullopt when the times do not show
// `below` winning at the bracket's start and `above` at its end inside [lo, hi] (a tie at a grid
// size, or a pair unavailable there): the switch then stays at the grid size.
std::optional<Crossover> crossover_in_gap(const MeasuredTimes& below, const MeasuredTimes& above,
                                          std::uint64_t lo, std::uint64_t hi);

// How far apart the two probes of a fitted crossing lie: crossing / kProbeSpread and crossing *
// kProbeSpread, so when the fit is right one run leaves a bracket of kProbeSpread^2 = 1.232,
// inside kSettledRatio with room for a collective rounding a size down to whole elements.
inline constexpr double kProbeSpread = 1.11;
// A bracket this narrow (hi / lo) is settled: a job between its ends runs within a factor of
// 1.25 of where the switch is measured to be.
inline constexpr double kSettledRatio = 1.25;
// Refinement runs per tune at most: a 4x gap of the final grid bisected three times is 1.19x, so
// even a fit that never crosses settles in three.
inline constexpr int kRefinementIterations = 3;

// The sizes to measure next inside (c.lo, c.hi), ascending: the two around the fitted crossing
// (those of them strictly inside the bracket), or the geometric middle when the fits do not
// cross there. Empty when no whole byte lies strictly inside.
std::vector<std::uint64_t> probe_sizes(const Crossover& c);

// Whether `c` needs no more measurements: hi / lo <= kSettledRatio, or at every measured size of
// [c.lo, c.hi] the two pairs' times are within `noise` (relative) of each other, so that no
// measurement could tell where between them the switch belongs.
bool bracket_settled(const Crossover& c, const MeasuredTimes& below, const MeasuredTimes& above,
                     double noise);

// The switch `c` puts in `gap`: the final bracket, the fitted crossing (hi unless the verdict is
// crossing), the verdict and each pair's fit, as the profile records it.
SizeSwitch size_switch(const CrossoverGap& gap, const Crossover& c);

// Runs one refinement request; nullopt when the budget does not allow it.
using ProbeRunner = std::function<std::optional<TrialMeasurement>(const TrialRequest&)>;

// Every gap's switch, by ShapedOp, ascending. Each gap is located on its final-grid times; with a
// `run`, up to kRefinementIterations pair-mode runs then measure the probes of every gap not yet
// settled, all in one request per iteration: `base`'s env, phase, iterations, warmup, the
// collectives and communicators of those gaps (in `base`'s order), the pairs of their brackets
// (no kNcclOwnChoice: a pair costs a sweep, and the two pairs are all the bracket compares) and
// the union of their probes as `sizes`, `repeat` the iteration. Each gap takes the points of its
// own ShapedOp inside its grid gap at the sizes the run returns (a collective rounds a size down),
// where both of its pairs ran, and is located again. Refinement stops when every gap is settled,
// a run is refused or fails as a whole, or the iterations are spent; a gap also stops when a run
// adds no point to it or a pair of it fails its data check. Without `run`, the switches are the
// fits of the final grid alone. A gap with no bracket (crossover_in_gap) has no switch.
std::map<ShapedOp, std::vector<SizeSwitch>> refine_crossovers(std::vector<CrossoverGap> gaps,
                                                              const TrialRequest& base, double noise,
                                                              const ProbeRunner& run);

}  // namespace nccltune
