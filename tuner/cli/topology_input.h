// The `--from` and `--nvml-lib` options shared by topo and check, and reading the topology.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "topology/node_topology.h"
#include "topology/sources/topology_reader.h"

namespace nccltune::cli {

// Why a --from value (one source; "" is this machine) cannot be read at all, as one line naming
// --from: a value that names no source, or a path that does not exist or cannot be opened; ""
// when it can be opened (its content is judged when read).
std::string unreadable_source(const std::string& from);

struct TopologyInput {
  std::string from;
  ReadOptions options;

  void add_options(CLI::App& sub);
  // Reads the topology; on failure prints one line to stderr, after `command` ("nccltune topo"),
  // and returns nullopt.
  std::optional<NodeTopology> read(const std::string& command = "nccltune") const;
  // unreadable_source of --from.
  std::string unreadable() const { return unreadable_source(from); }
};

}  // namespace nccltune::cli
