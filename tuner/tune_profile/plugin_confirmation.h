// What a profile's per-size choices deliver through the tuner plugin, as plain values: the A/B
// rounds of NCCL's defaults against the env with nccltune's tuner plugin serving the profile, in
// fresh workers (tune runs them, tune/plugin_rounds.cpp), become results.with_plugin and each
// collective's plugin verdict. The rounds measure the final grid and, inside every served range,
// sizes off it (tune_profile/confirmation_sizes.h). A per_size range ships only where the plugin
// served it (its own count of the calls it served, collectives/tuner_control.h) and did not lose
// to the defaults beyond the tolerance: a range that lost somewhere is cut back to where it held,
// and the rest of it is left to NCCL's own choice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/objective.h"

namespace nccltune {

// The rounds' means at each point (trial.h): the defaults' and the env + plugin's busbw; per
// point 1 when the plugin served every call of it in every round (trial.h's plugin_served), and
// the plugin's reason where it declined. The points are the grid's and the off-grid sizes' alike;
// a collective's grid points are those at its results.sizes.
struct PluginRounds {
  std::vector<ShapedOp> ops;  // per point, its collective on its communicator (trial.h's point_op)
  std::vector<std::uint64_t> sizes;
  std::vector<double> defaults, with_plugin;
  std::vector<int> served;
  std::string declined_why;
  int rounds = 0;
};

// A per_size range that does not ship whole: at `bytes`, inside it, the plugin did not serve its
// choice (served false; `why` is the plugin's reason), or env + plugin ran at `ratio` of the
// defaults' busbw. `kept`: the part of it that still ships, where it held (cut_ranges); nullopt
// when none does. `bytes` is the losing size next to `kept` (the worse of the two when it was cut
// from both ends), or, for a range withheld whole, its first size not served, else its slowest.
struct WithheldRange {
  ShapedOp op;
  SizeChoice range;
  std::uint64_t bytes = 0;
  double ratio = 1;
  bool served = true;
  std::string why;
  std::optional<SizeChoice> kept;
};

// The per_size ranges of `profile`'s tuned collectives, on every communicator it has a section
// of, that the rounds withhold, in whole or in part: not served at some measured size inside, or
// slower than the defaults beyond `tolerance` there. In ShapedOp's order, each range once.
//
// What is kept of each: every size from a losing one to the range's nearer edge (by ratio; the
// upper edge on a tie) goes to NCCL's own choice; the rest keeps the range's choice if a measured
// size there held, else nothing is kept. Between the last size that held and the first that lost
// the switch goes at their geometric midpoint (see plugin_confirmation.cpp for why).
std::vector<WithheldRange> withheld_ranges(const Profile& profile, const PluginRounds& rounds,
                                           double tolerance);

// `profile` less those ranges, whole.
void drop_ranges(Profile& profile, const std::vector<WithheldRange>& withheld);

// `profile` with each of those ranges cut back to its `kept` part, or removed where nothing is
// kept: the sizes cut off are no range's, so NCCL's own choice runs there (the plugin serves only
// what a range covers).
void cut_ranges(Profile& profile, const std::vector<WithheldRange>& withheld);

// Records the last rounds in `profile`: results.with_plugin (its points at results.sizes, the
// grid; the off-grid points only decide what is withheld) and its score for each tuned collective
// that kept a range, each collective's plugin verdict (confirmed, not served, slower) with why,
// and provenance.plugin_confirmation. `withheld`: every range the rounds withheld or cut, the
// earlier rounds' too.
void record_with_plugin(Profile& profile, const PluginRounds& rounds, Objective objective, double tolerance,
                        const std::vector<WithheldRange>& withheld);

// "all_reduce 65536..131071 Tree/LL (0.91x at 65536)", or
// "all_gather 262144..1048575 Ring/LL128 (not served at 524288)", for the notes; a range cut back
// says to what: "all_reduce 16384..4194303 Tree/LL128 cut back to 16384..1284244 (0.84x at
// 1572864)"; a split's range says its communicator as its section does: "rail: all_reduce
// 0..1048576 Ring/LL128 (...)".
std::string describe(const WithheldRange& range);

}  // namespace nccltune
