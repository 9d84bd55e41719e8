#include "fleet/pair_schedule.h"

#include <algorithm>
#include <string>

#include "base/printable_text.h"
#include "base/text_words.h"

namespace nccltune {
namespace {

// The full schedule's length, without building it (parse_rounds may see 100000 nodes).
int all_rounds(int nodes) {
  if (nodes < 2) return 0;
  return nodes % 2 == 0 ? nodes - 1 : nodes;
}

}  // namespace

std::vector<PairRound> round_robin(int nodes) {
  std::vector<PairRound> rounds;
  if (nodes < 2) return rounds;
  // The circle method: seat an even count of players at a table, the first fixed and the others
  // moving one seat each round; each round pairs the seats opposite each other. An odd count gets
  // a phantom player (index `nodes`): its partner rests that round, once per node in all.
  const int seats = nodes % 2 == 0 ? nodes : nodes + 1;
  std::vector<int> seat(static_cast<std::size_t>(seats));
  for (int i = 0; i < seats; ++i) seat[static_cast<std::size_t>(i)] = i;
  for (int r = 0; r < all_rounds(nodes); ++r) {
    PairRound round;
    for (int i = 0; i < seats / 2; ++i) {
      const int a = seat[static_cast<std::size_t>(i)];
      const int b = seat[static_cast<std::size_t>(seats - 1 - i)];
      if (a == nodes || b == nodes) continue;  // the phantom's partner rests
      round.push_back({std::min(a, b), std::max(a, b)});
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    std::rotate(seat.begin() + 1, seat.end() - 1, seat.end());
  }
  return rounds;
}

int default_rounds(int nodes) {
  // Each round of an even count gives every node a new partner, so 3 rounds give 3. With an odd
  // count one node rests each round, a different one each time: in 4 rounds a node rests at most
  // once and still meets 3 partners.
  const int wanted = nodes % 2 == 0 ? 3 : 4;
  return std::min(all_rounds(nodes), wanted);
}

Result<int> parse_rounds(std::string_view text, int nodes) {
  const int all = all_rounds(nodes);
  if (text == "all") return all;
  const std::optional<int64_t> count = to_int(text);
  if (count && *count >= 1 && *count <= all) return static_cast<int>(*count);
  const std::string shown = "'" + printable_excerpt(text, 40) + "'";
  if (all == 0)
    return Error{"--rounds: " + shown + ": " + std::to_string(nodes) + " node(s) make no pairs; only \"all\" fits"};
  return Error{"--rounds: " + shown + ": expected \"all\" or a count from 1 to " + std::to_string(all) +
               " (" + std::to_string(nodes) + " nodes)"};
}

PairRound without_nodes(const PairRound& round, const std::vector<int>& excluded) {
  PairRound kept;
  for (const NodePair& pair : round) {
    const auto is_excluded = [&](int node) {
      return std::find(excluded.begin(), excluded.end(), node) != excluded.end();
    };
    if (!is_excluded(pair[0]) && !is_excluded(pair[1])) kept.push_back(pair);
  }
  return kept;
}

}  // namespace nccltune
