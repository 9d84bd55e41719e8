// `nccltune env` in the full binary: the shared command (env/env_command.h) as a subcommand, and
// how this binary reads the node's type when neither --shape nor node.yaml gives it: the topology,
// NCCL and the CUDA driver, on the spot (nccltune-env hands the command over to it).
#include "cli/commands.h"
#include "collectives/library_versions.h"
#include "env/env_command.h"
#include "node/node_type.h"
#include "topology/sources/topology_reader.h"

namespace nccltune {

Result<std::string> local_node_type_key(const LocalReadOptions& options) {
  const Result<TopologySource> source = parse_topology_source(options.from);
  if (!source) return Error{source.error()};
  ReadOptions read_options;
  read_options.nvml_library = options.nvml_lib;
  const Result<NodeTopology> topology = read_node_topology(*source, read_options);
  if (!topology) return Error{topology.error()};
  const LibraryVersions versions =
      read_library_versions(choose_libraries(options.cuda_lib, options.nccl_lib));
  return node_type_key(local_node_type(*topology, versions.nccl, versions.cuda_driver));
}

namespace cli {

void add_env_command(CLI::App& app, Command& command) {
  add_env_options(
      *app.add_subcommand("env", "Print the NCCL environment of the profile that fits this job (fail-open)"),
      command.run);
}

}  // namespace cli

}  // namespace nccltune
