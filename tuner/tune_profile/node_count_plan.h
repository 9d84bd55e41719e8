// Which node counts one tune allocation measures (tune --node-counts): each count is measured on a
// communicator of that many whole nodes of the allocation, and written as its own <N>n.yaml.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

// "2,4,8": whole numbers from 1, each once. Errors are one line naming --node-counts.
Result<std::vector<int>> parse_node_counts(std::string_view text);

// The plan for an allocation of `nodes` nodes, largest first: `asked` (each at most `nodes`), or by
// default `nodes` and every power of two from 2 below it (8: 8, 4, 2; 6: 6, 4, 2; 1: 1).
// `whole_nodes`: every node holds as many ranks as the others, so that any count of them is a
// communicator of whole, alike nodes; when not, only the whole allocation can be measured.
Result<std::vector<int>> node_count_plan(const std::optional<std::vector<int>>& asked, int nodes,
                                         bool whole_nodes);

}  // namespace nccltune
