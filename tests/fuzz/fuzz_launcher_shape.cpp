// Feeds arbitrary launcher environments to launcher_shape (the job's shape as the NCCL env plugin
// reads it from NCCLTUNE_NODES, Slurm, torchrun, Open MPI and PMI variables). The input is
// "NAME=VALUE" lines. Asserts what the plugin relies on: a shape it returns has at least one node
// and, when known, at least one GPU per node (Slurm's 0 for a job without GPUs aside); an error is
// one line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "node/launcher_shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> environment;
  while (!text.empty()) {
    const std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(line.size() == text.size() ? text.size() : line.size() + 1);
    const auto equals = line.find('=');
    if (equals != std::string_view::npos)
      environment[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
  }
  const nccltune::Result<nccltune::LauncherShape> shape = nccltune::launcher_shape(environment);
  if (shape) {
    if (shape->job.nodes < 1 || (shape->job.gpus_per_node && *shape->job.gpus_per_node < 0)) std::abort();
    if (shape->source.empty()) std::abort();
  } else if (shape.error().find('\n') != std::string::npos) {
    std::abort();
  }
  return 0;
}
