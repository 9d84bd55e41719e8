// nccltune-env: `nccltune env` for prologs, as a lean executable. The full `nccltune` loads MPI,
// hwloc and verbs at every start, several milliseconds a prolog does not need when --shape or the
// daemon's node.yaml names the node type; this binary links none of them. When the node type has
// to be read from the machine itself, it hands the whole command to `nccltune env` beside it.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "env_command.h"
#include "logging.h"

namespace {

std::vector<std::string> arguments;  // argv[1..], for the hand-over

}  // namespace

namespace nccltune::cli {

Result<std::string> local_node_type_key(const LocalReadOptions&) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return Error{"cannot find nccltune to read this node's type: /proc/self/exe: " + error.message()};
  const std::string full = (self.parent_path() / "nccltune").string();
  std::vector<std::string> words{full, "env"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  ::execv(full.c_str(), argv.data());
  return Error{full + ": " + std::strerror(errno) +
               " (nccltune-env reads this node's type through it; or pass --shape, or run nccltuned)"};
}

}  // namespace nccltune::cli

int main(int argc, char** argv) {
  // `nccltune-env env ...` works too, so a script written for `nccltune env` switches binaries by
  // changing only the name it runs.
  if (argc > 1 && std::string(argv[1]) == "env") {
    argv[1] = argv[0];
    --argc;
    ++argv;
  }
  arguments.assign(argv + 1, argv + argc);
  CLI::App app{"nccltune-env: print the NCCL environment of the profile that fits this job (fail-open); "
               "the same options as `nccltune env`"};
  nccltune::cli::Command command;
  nccltune::cli::add_env_options(app, command);
  CLI11_PARSE(app, argc, argv);
  nccltune::setup_logging(0);  // NCCLTUNE_LOG_LEVEL=info says which profile was chosen
  return command.run ? command.run() : 0;
}
