// One scan of this node, as nccltuned does it at start and every interval: the topology with the
// same code as `nccltune topo` (live or `--from`), the same checks as `nccltune check`, the node
// type key as `tune` writes it. A source that is missing or fails degrades the facts (recorded in
// NodeState::degraded); a scan never fails.
#pragma once

#include <chrono>
#include <string>

#include "collectives/library_versions.h"
#include "node/node_state.h"
#include "node/node_type.h"
#include "topology/checks.h"
#include "topology/sources/topology_reader.h"

namespace nccltune {

struct ScanSettings {
  TopologySource source;  // live, or a replayed snapshot
  ReadOptions read_options;
  Expectation expectation;
  // Read when a library file changed (library_files_changed): loading libnccl every scan costs memory.
  LibraryVersions versions;
};

struct ScanResult {
  NodeState state;
  bool facts_read = false;  // false when the topology could not be read at all: nothing to compare
};

ScanResult scan_node(const ScanSettings& settings, std::chrono::system_clock::time_point now);

// Pure: the state of a topology that was read, before drift is known.
NodeState node_state_of(const NodeTopology& topology, const CheckReport& report,
                        const LibraryVersions& versions);

}  // namespace nccltune
