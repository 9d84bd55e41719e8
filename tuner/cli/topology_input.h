// The `--from` and `--nvml-lib` options shared by topo and check, and reading the topology.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "topology/node_topology.h"
#include "topology/sources/topology_reader.h"

namespace nccltune::cli {

struct TopologyInput {
  std::string from;
  ReadOptions options;

  void add_options(CLI::App& sub);
  // Reads the topology; on failure prints one line to stderr and returns nullopt.
  std::optional<NodeTopology> read() const;
};

}  // namespace nccltune::cli
