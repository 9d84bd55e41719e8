// The pairs stage's schedule: disjoint node pairs in rounds (the circle method of round-robin
// tournaments), so that each round every node meets a new partner and all pairs of a round run at
// once. N nodes take N-1 rounds for every pair (N rounds when N is odd: one node rests per round).
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

using NodePair = std::array<int, 2>;  // node indexes, lower first
using PairRound = std::vector<NodePair>;

// Every round of the full schedule; no node twice in a round, every pair exactly once.
std::vector<PairRound> round_robin(int nodes);

// Rounds enough that each node meets 3 partners (every round when there are fewer).
int default_rounds(int nodes);

// `--rounds`: "all" (every pair) or a count from 1 to all; an error names the flag.
Result<int> parse_rounds(std::string_view text, int nodes);

// `round` without the pairs that hold an excluded node (a node that failed earlier).
PairRound without_nodes(const PairRound& round, const std::vector<int>& excluded);

}  // namespace nccltune
