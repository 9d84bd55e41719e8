// Which collectives a tune measures (`tune --ops`) and which it only guards (`tune --guard`):
// names checked, duplicates and overlaps refused, alltoall guarded unless it is tuned or the
// user names other guards.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

inline constexpr std::string_view kDefaultTunedCollectives = "all_reduce,all_gather,reduce_scatter";
// What tune measures: the collectives training jobs spend their communication in.
inline constexpr std::string_view kTunableCollectives = "all_reduce, all_gather, reduce_scatter, alltoall";

struct CollectiveSelection {
  std::vector<std::string> tuned;   // in the order given
  std::vector<std::string> guards;  // measured against the defaults only
};

// `ops`: a comma list of kTunableCollectives. `guard`: likewise, or "none"; empty when the user
// gave none: then alltoall, unless `ops` names it. One line naming the flag on error.
Result<CollectiveSelection> select_collectives(std::string_view ops, std::string_view guard);

}  // namespace nccltune
