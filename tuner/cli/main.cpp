// nccltune: the command-line front end. Each subcommand lives in its own *_command.cpp and
// registers itself in commands.h; parsing picks one, then it runs after logging is set up.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "logging.h"

int main(int argc, char** argv) {
  CLI::App app{"nccltune: find the fastest NCCL settings for a GPU cluster and hand them to every job"};
  app.set_version_flag("--version", std::string("nccltune ") + NCCLTUNE_VERSION);
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output (repeat for debug)");

  nccltune::cli::Command command;
  nccltune::cli::add_topo_command(app, command);
  nccltune::cli::add_check_command(app, command);
  nccltune::cli::add_tune_command(app, command, &argc, &argv);
  nccltune::cli::add_bench_command(app, command, &argc, &argv);
  nccltune::cli::add_import_command(app, command);
  nccltune::cli::add_worker_command(app, command);
  nccltune::cli::add_report_command(app, command);
  nccltune::cli::add_show_command(app, command);
  nccltune::cli::add_diff_command(app, command);
  nccltune::cli::add_env_command(app, command);

  CLI11_PARSE(app, argc, argv);
  nccltune::setup_logging(verbosity);
  return command.run ? command.run() : 0;
}
