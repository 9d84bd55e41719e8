// What one node sends rank 0 of NCCL's logs in a tune: its ranks' logs read on the node (an
// NcclInfoLogReader's result), not their text, so rank 0 holds one summary per node whatever
// the ranks per node and the log size. Rank 0 adds each with NcclInfoLogReader::add(const
// NcclInfoLog&). Every field round-trips; `transport` is derived again by the reader.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "collectives/nccl_info_log.h"

namespace nccltune {

std::string node_log_summary_to_json(const NcclInfoLog& log);
// One line naming what is wrong for text that is not such a summary.
Result<NcclInfoLog> node_log_summary_from_json(std::string_view text);

}  // namespace nccltune
