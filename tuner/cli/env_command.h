// The parts of `nccltune env` (env_command.cpp) that its two binaries provide differently. The
// full `nccltune` registers it as a subcommand; the lean `nccltune-env` (tuner/env/), which links
// no MPI, hwloc or verbs so that prologs start fast, registers the same options at its top level.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "commands.h"
#include "result.h"

namespace nccltune::cli {

// env's options and command on `app` (add_env_command does this on an `env` subcommand). The
// command fails open on any exception too: one line on stderr, status 0 (2 with --strict).
void add_env_options(CLI::App& app, Command& command);

// env's answer when CLI11 cannot parse its command line (`words`: argv[1..]): --help and --version
// print what CLI11 prints (app.exit), anything else is one line on stderr (and syslog under Slurm
// or with --syslog) and the fail-open status: 0, or 2 when --strict is among the words.
int env_parse_failure(const CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& words);

// The node type key of this node when neither --shape nor the daemon's node.yaml gives it: the
// topology, NCCL and the CUDA driver read on the spot. `nccltune` reads them itself
// (env_local_read.cpp); `nccltune-env` hands the whole command over to `nccltune env` instead.
struct LocalReadOptions {
  std::string from;  // --from: a node snapshot, nvidia-smi:FILE or hwloc:FILE; empty: this machine
  std::string nvml_lib = "libnvidia-ml.so.1", nccl_lib, cuda_lib;  // empty: $NCCLTUNE_*_LIB, else the system's
};
Result<std::string> local_node_type_key(const LocalReadOptions& options);

}  // namespace nccltune::cli
