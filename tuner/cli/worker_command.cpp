// `nccltune worker`: internal. One rank of one trial, spawned by bench and tune when the lean
// `nccltune-worker` executable is not installed beside this one; see collectives/worker.h.
#include "cli/commands.h"
#include "collectives/worker.h"

namespace nccltune::cli {

void add_worker_command(CLI::App& app, Command& command) {
  auto* sub = app.add_subcommand("worker", "Internal: one rank of one trial (spawned by bench and tune)");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are a trial's outcomes
  sub->group("");  // hidden from the main --help
  sub->callback([&command] { command.run = [] { return run_worker_process(); }; });
}

}  // namespace nccltune::cli
