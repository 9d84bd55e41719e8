// `nccltune topo`: the node's GPU/NIC matrix, PCIe links and nearest NICs; snapshots.
// Exit 0 shown, 1 when the source was read but holds no valid topology or --capture failed,
// 3 on a usage error or a --from that does not exist or cannot be opened.
#include <cstdio>
#include <iostream>
#include <memory>

#include "base/printable_text.h"
#include "cli/commands.h"
#include "cli/topology_input.h"
#include "topology/nccl_topo_xml.h"
#include "topology/sources/snapshot.h"
#include "topology/topology_json.h"
#include "topology/topology_table.h"

namespace nccltune::cli {

namespace {

struct TopoOptions {
  TopologyInput input;
  std::string format = "table";
  std::string capture;
};

int run_topo(const TopoOptions& options) {
  if (const std::string problem = options.input.unreadable(); !problem.empty()) {
    print_error_line("nccltune topo", problem);
    return kInputError;
  }
  if (!options.capture.empty()) {
    if (!options.input.from.empty()) {
      std::fprintf(stderr,
                   "nccltune topo: --capture reads the live machine; it cannot be combined with --from\n");
      return kInputError;
    }
    auto captured =
        capture_snapshot(options.capture, options.input.options, std::string("nccltune ") + NCCLTUNE_VERSION);
    if (!captured) {
      print_error_line("nccltune topo", captured.error());
      return 1;
    }
    std::fprintf(stderr, "nccltune: snapshot written to %s\n", options.capture.c_str());
  }
  auto topology = options.input.read("nccltune topo");
  if (!topology) return 1;  // read, but not a topology: damaged, hostile or over a cap
  if (options.format == "json")
    std::cout << topology_to_json(*topology).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else if (options.format == "yaml")
    std::cout << json_to_yaml(topology_to_json(*topology));
  else if (options.format == "nccl-xml")
    std::cout << nccl_topo_xml(*topology);
  else
    std::cout << render_topology_table(*topology);
  return 0;
}

}  // namespace

void add_topo_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<TopoOptions>();
  auto* sub = app.add_subcommand("topo", "Show the node's GPU/NIC topology, PCIe links and nearest NICs");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  options->input.add_options(*sub);
  sub->add_option("--format", options->format,
                  "Output format (nccl-xml: an NCCL topology file for NCCL_TOPO_FILE)")
      ->check(CLI::IsMember({"table", "json", "yaml", "nccl-xml"}))
      ->capture_default_str();
  sub->add_option("--capture", options->capture,
                  "Also write a node snapshot of this machine to DIR (new or empty)");
  sub->callback([options, &command] { command.run = [options] { return run_topo(*options); }; });
}

}  // namespace nccltune::cli
