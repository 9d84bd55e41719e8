// `nccltune tune`: MPI-launched sweep that writes the fastest profile for this cluster shape.
// Exit status (README "Exit codes"): 0 written; 1 could not finish (NCCL's defaults cannot run,
// a profile cannot be written); 2 bad input or a setup it cannot tune.
//   mpirun -np 16 --map-by ppr:8:node nccltune tune --out /shared/nccltune/profiles
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/byte_size.h"
#include "base/duration.h"
#include "base/printable_text.h"
#include "cli/commands.h"
#include "mpi_runtime/launcher.h"
#include "mpi_runtime/mpi_session.h"
#include "search/collective_selection.h"
#include "profile/comm_shape.h"
#include "tune/tune_job.h"
#include "tune_profile/node_count_plan.h"

namespace nccltune::cli {

namespace {

struct TuneFlags {
  TuneOptions options;
  std::string budget = "30m";
  std::string objective = "balanced";
  std::string min_bytes = "8", max_bytes = "1G", max_bytes_per_size = "1G";
  std::string progress = "auto";
  std::string pair_mode = "auto";
  std::string ops = std::string(kDefaultTunedCollectives), guard;
  std::string node_counts;
  std::string comms;
};

int run_tune(TuneFlags flags, int* argc, char*** argv) {
  if (!check_launcher("nccltune tune")) return 2;
  auto session = MpiSession::start(argc, argv);
  if (!session) {
    print_error_line("nccltune tune", session.error());
    return 2;
  }
  MpiSession& mpi = **session;
  auto fail = [&](const std::string& message) {
    if (mpi.rank() == 0) print_error_line("nccltune tune", message);
    return 2;
  };
  if (!flags.options.space_file.empty() && ::access(flags.options.space_file.c_str(), R_OK) != 0)
    return fail("--space " + printable_excerpt(flags.options.space_file, 200) + ": " + std::strerror(errno));
  auto budget = parse_duration(flags.budget, std::chrono::seconds(1), std::chrono::hours(24 * 30));
  if (!budget) return fail("--budget " + budget.error());
  auto objective = parse_objective(flags.objective);
  if (!objective) return fail("--objective: " + objective.error());
  auto min = parse_byte_size(flags.min_bytes);
  auto max = parse_byte_size(flags.max_bytes);
  auto cap = parse_byte_size(flags.max_bytes_per_size);
  if (!min) return fail("--min-bytes " + min.error());
  if (!max) return fail("--max-bytes " + max.error());
  if (!cap) return fail("--max-bytes-per-size " + cap.error());
  if (*min == 0 || *min > *max) return fail("--min-bytes must be positive and at most --max-bytes");
  auto collectives = select_collectives(flags.ops, flags.guard);
  if (!collectives) return fail(collectives.error());
  if (!flags.node_counts.empty()) {
    auto counts = parse_node_counts(flags.node_counts);
    if (!counts) return fail(counts.error());
    flags.options.node_counts = *counts;
  }
  if (!flags.comms.empty()) {
    auto comms = parse_comms(flags.comms);
    if (!comms) return fail(comms.error());
    flags.options.comms = *comms;
  }
  TuneOptions& o = flags.options;
  o.strategy.collectives = collectives->tuned;
  o.strategy.guards = collectives->guards;
  o.strategy.budget = *budget;
  o.strategy.objective = *objective;
  o.strategy.screen_grid = {*min, *max, 8};
  o.strategy.final_grid = {*min, *max, 4};
  o.max_bytes_per_size = *cap;
  o.pair_mode = flags.pair_mode == "auto";
  o.progress = flags.progress == "line"  ? ProgressStyle::line
               : flags.progress == "log" ? ProgressStyle::log
                                         : ProgressStyle::automatic;
  return run_tune_job(mpi, mpi.layout(), o);
}

}  // namespace

void add_tune_command(CLI::App& app, Command& command, int* argc, char*** argv) {
  auto flags = std::make_shared<TuneFlags>();
  TuneOptions& o = flags->options;
  auto* sub = app.add_subcommand(
      "tune",
      "MPI-launched sweep that writes the fastest NCCL profile for this cluster shape (exit 0 written, "
      "1 could not finish, 2 bad input or a setup it cannot tune)");
  command.usage_exit_codes[sub->get_name()] = kUsageError;  // its documented code for bad input
  sub->footer(
      "Exit status: 0 every profile written; 1 the tune could not finish: NCCL's own defaults fail "
      "here (the first probe, or at one of the node counts), or a profile cannot be written; 2 a "
      "usage error or a setup it cannot tune: fewer than 2 ranks, no MPI, an unreadable --space, "
      "--node-counts the allocation cannot hold, nodes that differ without --allow-mixed, a journal "
      "it cannot open.\n");
  sub->add_option("--space", o.space_file,
                  "Search space YAML (default: the built-in configs/search-space.yaml)");
  sub->add_option("--out", o.out_dir, "Profile store: writes <out>/<shape key>/<nodes>n.yaml")
      ->capture_default_str();
  sub->add_option("--journal", o.journal,
                  "Journal of finished trials, JSON lines (default: <out>/journal.jsonl)");
  sub->add_flag("--resume", o.resume,
                "Measure nothing again that the journal holds for this shape and NCCL version");
  sub->add_option("--budget", flags->budget, "Time budget, e.g. 30m, 1h30m, 90s")->capture_default_str();
  sub->add_option("--max-trials", o.strategy.max_trials, "Stop after this many trials (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--objective", flags->objective, "balanced, bandwidth or latency")->capture_default_str();
  sub->add_option("--tolerance", o.strategy.tolerance, "Largest loss at any size the objective accepts")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_option("--ops", flags->ops,
                  "Collectives to tune, measured together in every trial (" + std::string(kTunableCollectives) + ")")
      ->capture_default_str();
  sub->add_option("--guard", flags->guard,
                  "Collectives measured against the defaults only: a setting that slows one is not shipped "
                  "(default: alltoall unless tuned; none: no guard)");
  sub->add_option("--min-bytes", flags->min_bytes, "Smallest message size measured")->capture_default_str();
  sub->add_option("--max-bytes", flags->max_bytes,
                  "Largest message size measured; above it NCCL's own choices stand")
      ->capture_default_str();
  sub->add_option("--max-bytes-per-size", flags->max_bytes_per_size,
                  "Fewer iterations at large sizes: bytes per timed loop at most")
      ->capture_default_str();
  sub->add_option("--from", o.from,
                  "Read the nodes' topology from this source instead of the live machine (A,B,...: node i "
                  "reads entry i)");
  sub->add_option("--progress", flags->progress, "auto, line (one live line) or log (a line per trial)")
      ->check(CLI::IsMember({"auto", "line", "log"}))
      ->capture_default_str();
  sub->add_option(
         "--node-counts", flags->node_counts,
         "Node counts to tune in this allocation, each on that many whole nodes and written as its own "
         "<N>n.yaml (default: the allocation's and every power of two from 2 below it)")
      ->type_name("LIST");
  sub->add_option("--comms", flags->comms,
                  "Communicator shapes every trial measures: world, rail (one rank per node), node (one "
                  "node's ranks); env ships only what slows none (default: world,rail,node on 2+ nodes)")
      ->type_name("LIST");
  sub->add_flag("--allow-mixed", o.allow_mixed, "Tune even when the nodes are not alike");
  sub->add_option("--pair-mode", flags->pair_mode,
                  "auto: measure the NCCL_ALGO x NCCL_PROTO pairs of one env in one communicator through "
                  "nccltune's tuner plugin when NCCL >= 2.22 loads it; off: one env trial per pair")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  sub->add_option("--cuda-lib", o.cuda_lib,
                  "CUDA driver library (default: $NCCLTUNE_CUDA_LIB or libcuda.so.1)");
  sub->add_option("--nccl-lib", o.nccl_lib, "NCCL library (default: $NCCLTUNE_NCCL_LIB or libnccl.so.2)");
  sub->add_option("--init-timeout", o.init_timeout_s, "Seconds a trial may take to start NCCL")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--size-timeout", o.size_timeout_s, "Seconds one size may take")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->callback([flags, &command, argc, argv] {
    command.run = [flags, argc, argv] { return run_tune(*flags, argc, argv); };
  });
}

}  // namespace nccltune::cli
