// The subcommands of `nccltune`. Each add_*_command registers its options and the exit code of
// its usage errors and, when chosen, stores what to run in `command.run`.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

namespace nccltune::cli {

// The exit status of a usage error (an unknown flag, a bad value, an input that does not exist
// or cannot be opened) wherever 1 and 2 are verdicts: check, explain, topo, bench, fleet, import,
// observe (and the internal worker); check and explain also when their input cannot be read at all.
// See cli/usage_error.h and README's "Exit codes".
constexpr int kInputError = 3;
// The exit status of a usage error where 2 is the documented code for bad input: tune, show,
// report, diff, and nccltune without a known subcommand.
constexpr int kUsageError = 2;

struct Command {
  std::function<int()> run;  // the chosen subcommand; returns its verdict as the exit status
  // The exit status of a usage error, by subcommand, as each registration says it; a subcommand
  // that says none (and nccltune itself) gets kUsageError. The codes never read as a verdict.
  std::map<std::string, int, std::less<>> usage_exit_codes;
};

void add_topo_command(CLI::App& app, Command& command);
void add_check_command(CLI::App& app, Command& command);
void add_import_command(CLI::App& app, Command& command);
void add_explain_command(CLI::App& app, Command& command);
void add_bench_command(CLI::App& app, Command& command, int* argc, char*** argv);
void add_worker_command(CLI::App& app, Command& command);
void add_tune_command(CLI::App& app, Command& command, int* argc, char*** argv);
void add_fleet_command(CLI::App& app, Command& command, int* argc, char*** argv);
void add_report_command(CLI::App& app, Command& command);
void add_show_command(CLI::App& app, Command& command);
void add_diff_command(CLI::App& app, Command& command);
void add_env_command(CLI::App& app, Command& command);
void add_observe_command(CLI::App& app, Command& command);

}  // namespace nccltune::cli
