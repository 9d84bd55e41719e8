// `nccltune env`, shared by its two binaries: the full `nccltune` registers it as a subcommand;
// the lean `nccltune-env` (tuner/env/main.cpp), which links no MPI, hwloc or verbs so that
// prologs start fast, registers the same options at its top level. Each binary provides
// local_node_type_key its own way.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"

namespace nccltune {

// env's options on `app` (`nccltune` adds them to its `env` subcommand); once parsed, `run` is
// the command. It fails open on any exception too: one line on stderr, status 0 (2 with --strict).
void add_env_options(CLI::App& app, std::function<int()>& run);

// env's answer when CLI11 cannot parse its command line (`words`: argv[1..]): --help and --version
// print what CLI11 prints (app.exit), anything else is one line on stderr (and syslog under Slurm
// or with --syslog) and the fail-open status: 0, or 2 when --strict is among the words.
int env_parse_failure(const CLI::App& app, const CLI::ParseError& error,
                      const std::vector<std::string>& words);

// The node type key of this node when neither --shape nor the daemon's node.yaml gives it: the
// topology, NCCL and the CUDA driver read on the spot. `nccltune` reads them itself
// (env_local_read.cpp); `nccltune-env` hands the whole command over to `nccltune env` instead.
struct LocalReadOptions {
  std::string from;  // --from: a snapshot, nvidia-smi[-q]:FILE or hwloc:FILE; empty: this machine
  std::string nvml_lib = "libnvidia-ml.so.1", nccl_lib,
              cuda_lib;  // empty: $NCCLTUNE_*_LIB, else the system's
};
Result<std::string> local_node_type_key(const LocalReadOptions& options);

}  // namespace nccltune
