// Node snapshots (`topo --capture DIR`): what ops attach to a bug report and tests replay, like
// hwloc's gather-topology. Layout in README.md, "Node snapshots".
#pragma once

#include <filesystem>
#include <string>

#include "base/status.h"
#include "topology/sources/topology_reader.h"

namespace nccltune {

// Captures the live node into `dir`, which must not exist or be empty. The snapshot is built in
// a temporary sibling and renamed into place, so `dir` is either whole or absent.
Status capture_snapshot(const std::filesystem::path& dir, const ReadOptions& options,
                        const std::string& tool_version);

}  // namespace nccltune
