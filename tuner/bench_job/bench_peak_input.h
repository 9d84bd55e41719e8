// The hardware peak a benchmark's busbw is read against, for bench and import: the node's facts
// from --from (a snapshot, nvidia-smi:FILE, hwloc:FILE) or this machine, then the peak model.
#pragma once

#include <optional>
#include <string>

#include "collectives/bench_result.h"
#include "topology/sources/topology_reader.h"

namespace nccltune {

// Never fails: a node that cannot be read, or a fact it lacks, gives an unknown peak that says
// why. `nodes` and `ranks` are those of the run (nullopt when a log does not say).
BenchPeak read_bench_peak(const std::string& from, const ReadOptions& options, const std::string& op,
                          std::optional<int> nodes, std::optional<int> ranks);

}  // namespace nccltune
