#include "cli/topology_input.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/printable_text.h"

namespace nccltune::cli {

void TopologyInput::add_options(CLI::App& sub) {
  sub.add_option(
      "--from", from,
      "Replay a node snapshot DIR, nvidia-smi:FILE (`nvidia-smi topo -m` output), nvidia-smi-q:FILE "
      "(`nvidia-smi -q` output) or hwloc:FILE (hwloc XML) instead of reading this machine");
  sub.add_option("--nvml-lib", options.nvml_library, "NVML library to dlopen")->capture_default_str();
}

std::optional<NodeTopology> TopologyInput::read(const std::string& command) const {
  auto source = parse_topology_source(from);
  if (!source) {
    print_error_line(command, source.error());
    return std::nullopt;
  }
  auto topology = read_node_topology(*source, options);
  if (!topology) {
    print_error_line(command, topology.error());
    return std::nullopt;
  }
  for (const auto& note : topology->notes) spdlog::info("{}", note);
  return std::move(topology.value());
}

std::string unreadable_source(const std::string& from) {
  if (from.empty()) return "";  // this machine
  const auto source = parse_topology_source(from);
  if (!source) return source.error();
  if (::access(source->path.c_str(), R_OK) != 0)
    return "--from " + printable_excerpt(source->path.string(), 200) + ": " + std::strerror(errno);
  return "";
}

}  // namespace nccltune::cli
