// What one node sends rank 0 of NCCL's logs in a tune: its ranks' logs read on the node (an
// NcclInfoLogReader's result), not their text, one summary per communicator shape, so rank 0
// holds a few summaries per node whatever the ranks per node and the log size. Rank 0 adds each
// with NcclInfoLogReader::add(const NcclInfoLog&). Every field round-trips; `transport` is
// derived again by the reader.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "collectives/nccl_info_log.h"

namespace nccltune {

std::string node_log_summary_to_json(const NcclInfoLog& log);
// One line naming what is wrong for text that is not such a summary.
Result<NcclInfoLog> node_log_summary_from_json(std::string_view text);

// A node's summaries, one per communicator shape, as one JSON array (what the node sends).
std::string node_log_summaries_to_json(const std::vector<NcclInfoLog>& logs);
Result<std::vector<NcclInfoLog>> node_log_summaries_from_json(std::string_view text);

// One process's log cut into its communicators' parts. A process that makes split communicators
// beside the world (the rail and node ones tune measures, profile/comm_shape.h) prints each one's
// init lines in turn, and NCCL's lines about NVLS, channels and connections do not name the
// communicator: only their place after its "Init START" line (ncclCommInitRank, ncclCommSplit;
// src/init.cc) or, in a log without those, its "comm 0x... rank R nRanks N nNodes M localRanks L"
// line says whose they are. So a part starts at each such line (Init START where the log has
// any); what comes before the first (the version, the env, the network plugin's lines: the
// process's) belongs to every part; a per-collective TUNING line ("AllReduce: 1048576 Bytes ->
// Algo ...", src/enqueue.cc) names no communicator and goes to the first part, the world, as
// before (one_choice_per_size sorts those out). "# file NAME" lines (NcclLogCapture::read_all)
// start a new process. A log with no such line is one part.
std::vector<std::string> communicator_parts(std::string_view text);

// A node's ranks' texts (source, text) read into one summary per communicator shape (ranks,
// nodes, ranks per node as each part's comm line says), the largest communicator first; parts
// that name no shape count as the first's.
std::vector<NcclInfoLog> node_logs_by_communicator(const std::vector<std::pair<std::string, std::string>>& texts);

}  // namespace nccltune
