// Where two per-size choices trade places between measured sizes. The tune measures a grid
// (every fourth power of two on the final grid), and a per_size range built from the winner at
// each point switches at a measured size: between two points whose winners differ, every size
// runs the lower point's winner, however early the other one overtook it (Tree/LL128
// won at 1M, Ring/LL128 at 4M, and a 3 MiB job ran Tree/LL128 at 0.60x of NCCL's own choice).
//
// NCCL itself models each algorithm and protocol as time = latency + bytes / bandwidth
// (ncclTopoGetAlgoTime, src/graph/tuning.cc, 2.28.9). So this fits that line to each candidate's
// measurements around the gap and puts the switch where the two fitted lines cross, with the
// bracket and both fits as the evidence a profile can record.
//
// Pure functions: no trial runs here.
//
// Where it is used: the per-size phase locates each switch and narrows its bracket in pair mode
// (search/crossover_refinement.h), the profile records it with this evidence (profile.h's
// SizeSwitch, profile_builder.h starts the upper range there), and the confirmation under the
// tuner plugin measures every served range off the grid and cuts back what loses
// (tune_profile/confirmation_sizes.h, plugin_confirmation.h). The env's confirmation fits the
// same model between the grid's sizes (fitted_loss.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

// One candidate's measured times: strictly ascending sizes, one time per size (microseconds,
// finite and above 0).
struct MeasuredTimes {
  std::vector<std::uint64_t> sizes;
  std::vector<double> time_us;
};

// NCCL's cost model of one algorithm and protocol, fitted: time_us = latency_us + bytes *
// us_per_byte.
struct CostFit {
  double latency_us = 0;
  double us_per_byte = 0;
  std::vector<std::uint64_t> sizes;  // the measured sizes it was fitted on

  // The bandwidth of the fit in GB/s (1e9 bytes per second): bytes over time, as NCCL's algbw, not
  // the bus bandwidth nccl-tests prints; 0 when the fitted time does not grow with size.
  double gbps() const;
  double time_us(double bytes) const;
};

// The least-squares fit of time = latency + bytes / bandwidth to every point of `times`, each
// residual relative to its measured time: the noise of a measurement is a fraction of it
// (fake-gpu's cv, a busy link), so a 16 MiB point's absolute error must not outweigh a 256 KiB
// point's. An error for fewer than two points, sizes not strictly ascending, or a time that is
// not finite and above 0.
Result<CostFit> fit_cost(const MeasuredTimes& times);

// What the fits say about a bracket.
enum class CrossoverFit {
  crossing,        // the fitted costs cross inside the bracket, in the measured order
  parallel,        // equal fitted bandwidths: the costs never cross
  outside_bracket, // they do not cross between lo and hi in the order measured there
  no_bandwidth,    // a fitted time does not grow with size: the fit is not NCCL's model
};
std::string_view to_string(CrossoverFit fit);  // "crossing", "parallel", "outside-bracket", "no-bandwidth"

// Where the switch goes in a bracket [lo, hi], from the fits of the candidate that won at lo
// (`below`) and of the one that won at hi (`above`): `crossing` and the fitted crossing rounded up
// to a whole byte, in (lo, hi]; any other verdict and hi, the measured boundary.
struct FittedSwitch {
  std::uint64_t bytes = 0;
  CrossoverFit fit = CrossoverFit::crossing;
};
FittedSwitch fitted_switch(const CostFit& below, const CostFit& above, std::uint64_t lo, std::uint64_t hi);

// One place where the measured winner changes, and where the fitted costs put the switch.
struct Crossover {
  // Adjacent decided sizes (one candidate strictly faster) with different winners; sizes where the
  // two measured the same lie between them.
  std::uint64_t lo = 0, hi = 0;
  // The first size at which the candidate that won at hi is cheaper by the fits (the fitted
  // crossing, rounded up), in (lo, hi]; hi, the measured boundary, when `fit` is not crossing.
  std::uint64_t bytes = 0;
  std::size_t below = 0;  // the candidate that won at lo: 0 the first, 1 the second
  CostFit first, second;  // each candidate's fit around the bracket
  CrossoverFit fit = CrossoverFit::crossing;

  bool fitted() const { return fit == CrossoverFit::crossing; }
};

// How many measured sizes on each side of a bracket join its two points in the fits: one.
// Two points alone give an exact line through both, so one point's noise moves the crossing by
// as much as that noise; a neighbour on each side averages it. Sizes farther off are in another
// regime of the same pair (a latency floor at small sizes, other chunk sizes and channel counts at
// large ones), where the two-parameter line is not the hardware's and would pull the fit away
// from the gap it has to describe.
inline constexpr std::size_t kCrossoverFitNeighbours = 1;

// Every bracket where the faster of the two candidates changes, ascending, each fitted on its two
// points and `neighbours` measured sizes beyond each (where the curves have them). The two
// candidates must be measured at the same sizes (at least two, strictly ascending) with finite
// times above 0 (pass only the points where both ran: pair mode's unavailable points are not
// times); anything else is an error naming the first offending point.
Result<std::vector<Crossover>> locate_crossovers(const MeasuredTimes& first, const MeasuredTimes& second,
                                                 std::size_t neighbours = kCrossoverFitNeighbours);

}  // namespace nccltune
