// The report's node-count section (README, "Every job size"): for each collective, the tuned busbw
// of every measured node count of the profile's node type, one curve each; and, for jobs of 1 node
// to twice the largest measured count, which profile a job gets under the serving rule
// (profile/node_count_rule.h) and what it withholds, so NCCL's own choice stands there.
#pragma once

#include <map>
#include <string>

#include "profile/profile.h"

namespace nccltune {

// `counts`: the store's profiles of one node type by node count (the report's own among them);
// `this_count` is the report's. Empty when `counts` is.
std::string render_node_counts_section(const std::map<int, Profile>& counts, int this_count);

}  // namespace nccltune
