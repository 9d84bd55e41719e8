#include "cli/topology_input.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "base/printable_text.h"

namespace nccltune::cli {

void TopologyInput::add_options(CLI::App& sub) {
  sub.add_option(
      "--from", from,
      "Replay a node snapshot DIR, nvidia-smi:FILE (`nvidia-smi topo -m` output), nvidia-smi-q:FILE "
      "(`nvidia-smi -q` output) or hwloc:FILE (hwloc XML) instead of reading this machine");
  sub.add_option("--nvml-lib", options.nvml_library, "NVML library to dlopen")->capture_default_str();
}

std::optional<NodeTopology> TopologyInput::read() const {
  auto source = parse_topology_source(from);
  if (!source) {
    print_error_line("nccltune", source.error());
    return std::nullopt;
  }
  auto topology = read_node_topology(*source, options);
  if (!topology) {
    print_error_line("nccltune", topology.error());
    return std::nullopt;
  }
  for (const auto& note : topology->notes) spdlog::info("{}", note);
  return std::move(topology.value());
}

}  // namespace nccltune::cli
