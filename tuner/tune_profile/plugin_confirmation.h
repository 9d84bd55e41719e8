// What a profile's per-size choices deliver through the tuner plugin, as plain values: the A/B
// rounds of NCCL's defaults against the env with nccltune's tuner plugin serving the profile, in
// fresh workers (tune runs them, tune/tune_job.cpp), become results.with_plugin, and a per_size
// range where the plugin's choice loses to the defaults beyond the tolerance leaves the profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/objective.h"

namespace nccltune {

// The rounds' means at each point (trial.h): the defaults' and the env + plugin's busbw.
struct PluginRounds {
  std::vector<std::string> ops;
  std::vector<std::uint64_t> sizes;
  std::vector<double> defaults, with_plugin;
  int rounds = 0;
};

// A per_size range whose choice lost: at `bytes`, inside it, env + plugin ran at `ratio` of the
// defaults' busbw.
struct LosingRange {
  std::string op;
  SizeChoice range;
  std::uint64_t bytes = 0;
  double ratio = 1;
};

// The per_size ranges of `profile`'s tuned collectives where env + plugin is slower than the
// defaults beyond `tolerance` at some measured size inside the range (the slowest such size).
std::vector<LosingRange> losing_ranges(const Profile& profile, const PluginRounds& rounds, double tolerance);

// `profile` less those ranges.
void drop_ranges(Profile& profile, const std::vector<LosingRange>& losing);

// Records the rounds in `profile`: each collective's results.with_plugin and its score against
// the defaults, and provenance.plugin_confirmation (`dropped`: the ranges an earlier round of
// rounds dropped, named there).
void record_with_plugin(Profile& profile, const PluginRounds& rounds, Objective objective, double tolerance,
                        const std::vector<LosingRange>& dropped);

// "all_reduce 65536..131071 Tree/LL (0.91x at 65536)", for the note.
std::string describe(const LosingRange& losing);

}  // namespace nccltune
