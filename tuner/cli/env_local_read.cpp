#include "env_command.h"

#include "cluster_shape.h"
#include "local_node_type.h"
#include "topology_reader.h"
#include "trial_runner.h"

namespace nccltune::cli {

Result<std::string> local_node_type_key(const LocalReadOptions& options) {
  const Result<TopologySource> source = parse_topology_source(options.from);
  if (!source) return Error{source.error()};
  ReadOptions read_options;
  read_options.nvml_library = options.nvml_lib;
  const Result<NodeTopology> topology = read_node_topology(*source, read_options);
  if (!topology) return Error{topology.error()};
  const LocalLibraries libraries{choose_library(options.nccl_lib, "NCCLTUNE_NCCL_LIB", "libnccl.so.2"),
                                 choose_library(options.cuda_lib, "NCCLTUNE_CUDA_LIB", "libcuda.so.1")};
  const Result<NodeType> type = local_node_type(*topology, libraries);
  if (!type) return Error{type.error()};
  return node_type_key(*type);
}

}  // namespace nccltune::cli
