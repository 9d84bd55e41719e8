// nccltune: the command-line front end. Each subcommand lives in its own *_command.cpp and
// registers itself in commands.h; parsing picks one, then it runs after logging is set up.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/printable_text.h"
#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/usage_error.h"
#include "env/env_command.h"
#include "mpi_runtime/launcher.h"

namespace {

// The subcommand a command line (argv[1..]) names: its first word that is not an option.
std::string subcommand_word(const std::vector<std::string>& words) {
  const auto word = std::find_if(words.begin(), words.end(),
                                 [](const std::string& w) { return w.empty() || w.front() != '-'; });
  return word == words.end() ? "" : *word;
}

}  // namespace

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
  nccltune::cli::add_fleet_command(app, command, &argc, &argv);
  nccltune::cli::add_bench_command(app, command, &argc, &argv);
  nccltune::cli::add_import_command(app, command);
  nccltune::cli::add_explain_command(app, command);
  nccltune::cli::add_worker_command(app, command);
  nccltune::cli::add_report_command(app, command);
  nccltune::cli::add_show_command(app, command);
  nccltune::cli::add_diff_command(app, command);
  nccltune::cli::add_env_command(app, command);
  nccltune::cli::add_observe_command(app, command);

  const bool first_rank = nccltune::is_first_rank([](const char* name) { return std::getenv(name); });
  // A word that names no subcommand says so and exits 2, with --help too: a script can tell an
  // older nccltune that lacks a subcommand from a newer one's usage error.
  const std::vector<std::string> words(argv + 1, argv + argc);
  const std::string subcommand = subcommand_word(words);
  const std::vector<CLI::App*> known = app.get_subcommands([](CLI::App*) { return true; });
  if (!subcommand.empty() &&
      std::none_of(known.begin(), known.end(), [&](CLI::App* sub) { return sub->check_name(subcommand); })) {
    // The nearest subcommand --help lists (not the internal worker), when the word is a likely typo.
    std::vector<std::string> listed;
    for (const CLI::App* sub : known)
      if (!sub->get_group().empty()) listed.push_back(sub->get_name());
    const std::string near = nccltune::cli::closest_word(subcommand, listed);
    if (first_rank)
      std::fprintf(stderr, "nccltune: unknown subcommand '%s' (%s)\n",
                   nccltune::printable_excerpt(subcommand, 100).c_str(),
                   near.empty() ? "see nccltune --help" : ("did you mean " + near + "?").c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (dynamic_cast<const CLI::Success*>(&error)) return app.exit(error);  // --help, --version
    const auto chosen = std::find_if(known.begin(), known.end(), [&](CLI::App* sub) {
      return !subcommand.empty() && sub->check_name(subcommand);
    });
    const CLI::App& parsed = chosen == known.end() ? app : **chosen;
    const std::string invoked = chosen == known.end() ? "nccltune" : "nccltune " + (*chosen)->get_name();
    const std::string line =
        nccltune::cli::usage_error_text(parsed, invoked, words, app.remaining(true), error);
    // `env` runs in prologs and fails open even on a command line it cannot parse: the same one
    // line, exit 0 (2 with --strict).
    if (chosen != known.end() && (*chosen)->get_name() == "env")
      return nccltune::env_parse_failure(app, CLI::ParseError(line, error.get_exit_code()), words);
    // A usage error: one line naming the subcommand and the flag, and an exit code that is none
    // of the subcommand's verdicts, whatever CLI11's own code for it.
    if (first_rank) std::fprintf(stderr, "%s: %s\n", invoked.c_str(), line.c_str());
    return nccltune::cli::usage_exit_code(command, chosen == known.end() ? "" : (*chosen)->get_name());
  }
  nccltune::setup_logging(verbosity);
  return command.run ? command.run() : 0;
}
