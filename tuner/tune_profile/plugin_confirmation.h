// What a profile's per-size choices deliver through the tuner plugin, as plain values: the A/B
// rounds of NCCL's defaults against the env with nccltune's tuner plugin serving the profile, in
// fresh workers (tune runs them, tune/tune_job.cpp), become results.with_plugin and each
// collective's plugin verdict. A per_size range ships only where the plugin served it at every
// measured size inside it (its own count of the calls it served, collectives/tuner_control.h) and
// did not lose to the defaults beyond the tolerance there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/objective.h"

namespace nccltune {

// The rounds' means at each point (trial.h): the defaults' and the env + plugin's busbw; per
// point 1 when the plugin served every call of it in every round (trial.h's plugin_served), and
// the plugin's reason where it declined.
struct PluginRounds {
  std::vector<ShapedOp> ops;  // per point, its collective on its communicator (trial.h's point_op)
  std::vector<std::uint64_t> sizes;
  std::vector<double> defaults, with_plugin;
  std::vector<int> served;
  std::string declined_why;
  int rounds = 0;
};

// A per_size range that does not ship: at `bytes`, inside it, the plugin did not serve its choice
// (served false; `why` is the plugin's reason), or env + plugin ran at `ratio` of the defaults'
// busbw (the slowest such size).
struct WithheldRange {
  ShapedOp op;
  SizeChoice range;
  std::uint64_t bytes = 0;
  double ratio = 1;
  bool served = true;
  std::string why;
};

// The per_size ranges of `profile`'s tuned collectives, on every communicator it has a section
// of, that the rounds withhold: not served at some measured size inside, or slower than the
// defaults beyond `tolerance` there. In ShapedOp's order.
std::vector<WithheldRange> withheld_ranges(const Profile& profile, const PluginRounds& rounds,
                                           double tolerance);

// `profile` less those ranges.
void drop_ranges(Profile& profile, const std::vector<WithheldRange>& withheld);

// Records the last rounds in `profile`: results.with_plugin and its score for each tuned collective
// that kept a range (the plugin served every measured size of its ranges), each collective's
// plugin verdict (confirmed, not served, slower) with why, and provenance.plugin_confirmation.
// `withheld`: every range the rounds withheld, the earlier rounds' too.
void record_with_plugin(Profile& profile, const PluginRounds& rounds, Objective objective, double tolerance,
                        const std::vector<WithheldRange>& withheld);

// "all_reduce 65536..131071 Tree/LL (0.91x at 65536)", or
// "all_gather 262144..1048575 Ring/LL128 (not served at 524288)", for the notes; a split's range
// says its communicator as its section does: "rail: all_reduce 0..1048576 Ring/LL128 (...)".
std::string describe(const WithheldRange& range);

}  // namespace nccltune
