#include "tune_profile/node_count_plan.h"

#include <algorithm>
#include <charconv>
#include <functional>

namespace nccltune {

Result<std::vector<int>> parse_node_counts(std::string_view text) {
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    int count = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || count < 1)
      return Error{"--node-counts: '" + std::string(item.substr(0, 40)) +
                   "' is not a node count (a whole number from 1)"};
    if (std::find(counts.begin(), counts.end(), count) != counts.end())
      return Error{"--node-counts: " + std::to_string(count) + " is given twice"};
    counts.push_back(count);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return counts;
}

Result<std::vector<int>> node_count_plan(const std::optional<std::vector<int>>& asked, int nodes,
                                         bool whole_nodes) {
  std::vector<int> counts;
  if (asked) {
    for (const int count : *asked) {
      if (count > nodes)
        return Error{"--node-counts: " + std::to_string(count) + " nodes, but the allocation has " +
                     std::to_string(nodes)};
      if (!whole_nodes && count != nodes)
        return Error{"--node-counts: " + std::to_string(count) +
                     ": the allocation's nodes run unlike numbers of ranks, so no part of it is a "
                     "communicator of whole, alike nodes; only " +
                     std::to_string(nodes) + " can be measured"};
      counts.push_back(count);
    }
  } else {
    counts.push_back(nodes);
    if (whole_nodes)
      for (int power = 2; power < nodes; power *= 2) counts.push_back(power);
  }
  std::sort(counts.begin(), counts.end(), std::greater<>());
  return counts;
}

}  // namespace nccltune
