// nccltune-env: `nccltune env` for prologs, as a lean executable. The full `nccltune` loads MPI,
// hwloc and verbs at every start, several milliseconds a prolog does not need when --shape or the
// daemon's node.yaml names the node type; this binary links none of them. When the node type has
// to be read from the machine itself, it hands the whole command to `nccltune env` beside it, as
// a child: its stdout is passed on only when it exits 0, so a full binary that cannot load or
// crashes still fails open.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "base/child_process.h"
#include "base/printable_text.h"
#include "env/env_command.h"

extern char** environ;

namespace {

std::vector<std::string> arguments;  // argv[1..], for the hand-over
// A topology read takes well under a second; nvidia-smi inside it has 10 s at most.
constexpr std::chrono::milliseconds kHandOverTimeout{30000};

// Thrown by local_node_type_key once `nccltune env` has run in its place: the status this process
// exits with, its output already written. Not a std::exception, so env's fail-open catch lets it by.
struct HandedOver {
  int status;
};

bool strict() {
  return std::find(arguments.begin(), arguments.end(), "--strict") != arguments.end();
}

int fail_open(const std::string& message) {
  std::fprintf(stderr, "nccltune env: %s\n", nccltune::printable_excerpt(message, 2000).c_str());
  return strict() ? 2 : 0;
}

// Runs `full env <arguments>`, its stdout captured, stdin, stderr and the environment inherited.
// The child's stdout reaches ours only when it exited 0.
int hand_over(const std::string& full) {
  std::vector<std::string> words{full, "env"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  const std::string why =
      " (nccltune-env reads this node's type through it; or pass --shape, or run nccltuned)";
  nccltune::CommandOptions options;
  options.timeout = kHandOverTimeout;
  options.keep_stdin = options.keep_stderr = true;
  const nccltune::Result<nccltune::CommandOutput> run = nccltune::run_command(words, environ, options);
  if (!run) return fail_open(run.error() + why);
  if (run->timed_out)
    return fail_open(full + ": no answer within " + std::to_string(kHandOverTimeout.count() / 1000) + " s" +
                     why);
  // `nccltune env --strict` exits 2 after its own line on the stderr we share: nothing to add.
  if (strict() && !run->exit.signaled && run->exit.code == 2) return 2;
  if (!run->exit.exited_cleanly()) return fail_open(full + ": " + run->exit.describe() + why);
  if (std::fwrite(run->out.data(), 1, run->out.size(), stdout) != run->out.size() || std::fflush(stdout) != 0)
    return fail_open("cannot write to stdout");
  return 0;
}

}  // namespace

namespace nccltune {

Result<std::string> local_node_type_key(const LocalReadOptions&) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return Error{"cannot find nccltune to read this node's type: /proc/self/exe: " + error.message()};
  throw HandedOver{hand_over((self.parent_path() / "nccltune").string())};
}

}  // namespace nccltune

int main(int argc, char** argv) {
  // `nccltune-env env ...` works too, so a script written for `nccltune env` switches binaries by
  // changing only the name it runs.
  if (argc > 1 && std::string(argv[1]) == "env") {
    argv[1] = argv[0];
    --argc;
    ++argv;
  }
  arguments.assign(argv + 1, argv + argc);
  CLI::App app{
      "nccltune-env: print the NCCL environment of the profile that fits this job (fail-open); "
      "the same options as `nccltune env`"};
  app.set_version_flag("--version", std::string("nccltune-env ") + NCCLTUNE_VERSION);
  std::function<int()> run;
  nccltune::add_env_options(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return nccltune::env_parse_failure(app, error, arguments);
  }
  try {
    return run ? run() : 0;
  } catch (const HandedOver& handed_over) {
    return handed_over.status;
  }
}
