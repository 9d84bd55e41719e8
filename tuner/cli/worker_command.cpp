// `nccltune worker`: internal. One rank of one trial, spawned by bench and tune; see
// collectives/worker.h. It dies with its parent, so no worker outlives a killed run.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "commands.h"
#include "worker.h"
#include "worker_protocol.h"

namespace nccltune::cli {

void add_worker_command(CLI::App& app, Command& command) {
  auto* sub = app.add_subcommand("worker", "Internal: one rank of one trial (spawned by bench and tune)");
  sub->group("");  // hidden from the main --help
  sub->callback([&command] {
    command.run = [] {
      const pid_t parent = getppid();
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) return 1;  // the parent died before prctl took effect
      return run_worker(STDIN_FILENO, kWorkerEventFd);
    };
  });
}

}  // namespace nccltune::cli
