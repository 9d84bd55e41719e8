// `nccltune check`: verdicts for ops. Exit 0 all pass, 1 warnings only, 2 failures,
// 3 when the topology or the expectation file cannot be read. Its text lists warnings and
// failures only, as NHC does, then the verdict; --verbose lists every check. On this machine (no
// --from) it also says which tuner NCCL loads by default here (default_tuner): a snapshot does not
// hold the machine's library path.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "base/printable_text.h"
#include "cli/commands.h"
#include "cli/topology_input.h"
#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/sources/nccl_tuner_probe.h"

namespace nccltune::cli {

namespace {

struct CheckOptions {
  TopologyInput input;
  std::string expect;
  std::string format = "text";
  bool verbose = false;
};

int run_check(const CheckOptions& options) {
  Expectation expectation;
  if (!options.expect.empty()) {
    auto loaded = read_expectation(options.expect);
    if (!loaded) {
      print_error_line("nccltune check", "--expect " + loaded.error());
      return kInputError;
    }
    expectation = *loaded;
  }
  auto topology = options.input.read("nccltune check");
  if (!topology) return kInputError;
  CheckReport report = check_node(*topology, expectation);
  if (options.input.from.empty()) {
    // The default: NCCL_TUNER_PLUGIN unset, the net plugin as this environment names it.
    const char* net_plugin = std::getenv("NCCL_NET_PLUGIN");
    report.findings.push_back(default_tuner_finding(
        find_nccl_tuner(std::nullopt, net_plugin ? std::optional<std::string>(net_plugin) : std::nullopt)));
  }
  if (options.format == "json")
    std::cout
        << check_to_json(*topology, report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  else
    std::cout << render_check_text(*topology, report,
                                   options.verbose ? CheckDetail::every_check : CheckDetail::problems);
  return report.exit_code();
}

}  // namespace

void add_check_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<CheckOptions>();
  auto* sub = app.add_subcommand(
      "check",
      "Check GPU-NIC affinity, PCIe links, NIC ports and the tuner NCCL loads by default (exit 0 pass, 1 warn, 2 "
      "fail)");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  options->input.add_options(*sub);
  sub->add_option("--expect", options->expect,
                  "YAML with gpus, nics, nic_rate_gbps, max_gpu_nic_link to check against (min_peak_pct and "
                  "outlier in it are fleet's thresholds)");
  sub->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_flag("--verbose", options->verbose,
                "List every check, passed ones too, and GPUDirect RDMA's state (text lists warnings and "
                "failures only without it; JSON always lists every check)");
  sub->callback([options, &command] { command.run = [options] { return run_check(*options); }; });
}

}  // namespace nccltune::cli
