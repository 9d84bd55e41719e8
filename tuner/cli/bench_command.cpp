// `nccltune bench`: MPI-launched, one worker process per rank, printing nccl-tests' table.
//   mpirun -np 8 nccltune bench -b 8 -e 1G -f 2 [--op all_reduce] [--json FILE | -J FILE]
//     [--from SRC] [--min-busbw GBPS] [--min-peak-pct P] [--nccl-log]
//   mpirun -np 8 nccltune bench --nccl-lib NEW --baseline-nccl-lib OLD [--rounds N] [--ops a,b]
//     [--max-regression PCT] [--profile FILE]: the upgrade check (bench_job/bench_upgrade.h)
// nccl-tests' other flags are taken where the worker does what they ask; the rest stop bench with
// one line saying why (kUnsupportedFlags), unless given nccl-tests' default.
// Exit 0, or 1 when a trial failed, the data was wrong or the busbw is below a threshold; 2 when a
// threshold cannot be judged (peak unknown); 3 on a usage error, or a CUDA driver or NCCL library
// that cannot be loaded (found before any table line, by every rank).
// This file is the command line; the job that runs once it is parsed is bench_job/bench_job.h.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/printable_text.h"
#include "bench_job/bench_job.h"
#include "cli/commands.h"
#include "cli/topology_input.h"

namespace nccltune::cli {

namespace {

// bench's options as the command line gives them: the job's, and what only the parser sees.
struct BenchOptions : BenchJobOptions {
  std::vector<std::pair<std::string, std::string>> unsupported;  // nccl-tests flags given: name, value
  std::vector<std::string> upgrade_flags_given;  // --rounds, --max-regression, --profile, --ops
};

// nccl-tests (2.19.6) flags that bench does not take, and why. Given with nccl-tests' default
// (`accepted`, when there is one) they change nothing and pass; any other value stops bench.
struct UnsupportedFlag {
  const char* names;     // as CLI11 takes them
  const char* accepted;  // nccl-tests' default; nullptr: none is
  const char* why;
};
constexpr UnsupportedFlag kUnsupportedFlags[] = {
    {"-m,--agg_iters", "1", "the worker times one collective per iteration, never several in one group"},
    {"-N,--run_cycles", "1", "run bench again instead"},
    {"-p,--parallel_init", "0", "every rank is a process of its own and initialises NCCL on its own already"},
    {"-z,--blocking", "0",
     "the worker launches a size's iterations back to back and waits once, as -z 0 does"},
    {"-y,--stream_null", "0", "the worker launches on a stream of its own"},
    {"-T,--timeout", "0", "use --size-timeout SECONDS and --init-timeout SECONDS instead"},
    {"-G,--cudagraph", "0", "the worker does not capture CUDA graphs"},
    {"-C,--report_cputime", "0", "bench reports the GPU time between CUDA events only"},
    {"-S,--report_timestamps", "0", "bench prints no timestamp column"},
    {"-I,--per_iter_timing", "0",
     "the worker times a size's iterations between one pair of CUDA events, so it has no per-iteration times "
     "(i_min i_max i_p99 i_cv%)"},
    {"-K,--per_iter_skip", "0", "it selects per-iteration times (-I 1), which bench does not have"},
    {"-R,--local_register", "0",
     "the worker registers no buffer with NCCL (ncclCommRegister) and allocates no symmetric window "
     "(ncclCommWindowRegister)"},
    {"-x,--cta_policy", nullptr, "set NCCL_CTA_POLICY in the environment instead (NCCL 2.27 and later)"},
    {"-D,--device_implementation", "0", "the worker calls NCCL's host API only"},
    {"-V,--device_cta_count", "16", "it sizes -D's device kernels, which bench does not run"},
    {"-M,--memory", "0", "bench prints no memory report"},
    {"-u,--unalign", "0", "the worker's buffers start where cuMemAlloc put them"},
};

// The first nccl-tests flag given that bench does not take, as one line; empty when none is.
std::string unsupported_flag_error(const std::vector<std::pair<std::string, std::string>>& given) {
  for (const auto& [name, value] : given) {
    for (const UnsupportedFlag& flag : kUnsupportedFlags) {
      if (name != flag.names) continue;
      if (flag.accepted && value == flag.accepted) break;
      const std::string_view names = flag.names;
      return fmt::format("{} {}: not supported: {}", names.substr(0, names.find(',')),
                         printable_excerpt(value, 40), flag.why);
    }
  }
  return {};
}

// The upgrade check's flags without --baseline-nccl-lib, or bench's health checks with it.
std::string upgrade_option_problem(const BenchOptions& o) {
  if (o.baseline_nccl_lib.empty()) {
    if (!o.upgrade_flags_given.empty())
      return o.upgrade_flags_given.front() +
             ": compares two NCCL libraries, with --baseline-nccl-lib OLD (and --nccl-lib NEW)";
    return "";
  }
  if (!(o.max_regression_percent > 0 && o.max_regression_percent < 100))
    return fmt::format("--max-regression {}: out of range (a percentage above 0 and below 100)",
                       printable_excerpt(fmt::format("{:g}", o.max_regression_percent), 40));
  if (o.rounds < 1 || o.rounds > 100) return fmt::format("--rounds {}: out of range (1 to 100)", o.rounds);
  if (o.min_busbw >= 0 || o.min_peak_percent >= 0)
    return "--baseline-nccl-lib: judges NEW against OLD; --min-busbw and --min-peak-pct judge one library "
           "(run bench without --baseline-nccl-lib for them)";
  if (o.nccl_log) return "--baseline-nccl-lib: --nccl-log reads one library's log (run bench without it)";
  return "";
}

}  // namespace

void add_bench_command(CLI::App& app, Command& command, int* argc, char*** argv) {
  auto options = std::make_shared<BenchOptions>();
  for (int i = 0; i < *argc; ++i) options->argv.emplace_back((*argv)[i]);
  auto* sub = app.add_subcommand(
      "bench", "MPI-launched collective benchmark printing nccl-tests' table (mpirun -np N nccltune bench)");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  sub->add_option("-b,--minbytes", options->min_bytes, "Smallest size (8, 64K, 1M, 1G)")
      ->capture_default_str();
  sub->add_option("-e,--maxbytes", options->max_bytes, "Largest size")->capture_default_str();
  sub->add_option("-f,--stepfactor", options->step_factor, "Multiply the size by this each step (> 1)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("-i,--stepbytes", options->step_bytes, "Else add this to the size each step")
      ->capture_default_str();
  sub->add_option("-n,--iters", options->iterations, "Timed iterations per size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("-w,--warmup_iters", options->warmup, "Warm-up iterations per size")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("-c,--check", options->check, "Check the data after timing (0 or 1)")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  sub->add_option("-a,--average", options->average,
                  "Time per op over ranks, as nccl-tests: 0 rank 0, 1 mean, 2 min, 3 max")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  sub->add_option("-g,--ngpus", options->gpus, "GPUs per rank: 1 (one rank per GPU)")->capture_default_str();
  sub->add_option("-t,--nthreads", options->threads, "Threads per process: 1 (one rank per GPU)")
      ->capture_default_str();
  sub->add_option("-d,--datatype", options->type, "float, half, bfloat16 or int32")->capture_default_str();
  sub->add_option("-o,--redop", options->redop, "Reduction operation")->capture_default_str();
  sub->add_option("-r,--root", options->root, "Root rank of broadcast and reduce")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--op", options->collective,
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce or alltoall")
      ->capture_default_str();
  sub->add_option("-J,--json,--output_file", options->json_path,
                  "Also write the results as nccltune/bench/v1 JSON to FILE, whatever its name ends in (-J "
                  "as in nccl-tests, whose own JSON schema this is not)")
      ->type_name("FILE");
  for (const UnsupportedFlag& flag : kUnsupportedFlags) {
    sub->add_option_function<std::string>(
           flag.names, [options, names = std::string(flag.names)](
                           const std::string& value) { options->unsupported.emplace_back(names, value); })
        ->group("");  // nccl-tests' flags bench refuses: hidden from --help, named in the README
  }
  sub->add_option("--cuda-lib", options->cuda_lib,
                  "CUDA driver library to dlopen (default: $NCCLTUNE_CUDA_LIB or libcuda.so.1)");
  sub->add_option("--nccl-lib", options->nccl_lib,
                  "NCCL library to dlopen (default: $NCCLTUNE_NCCL_LIB or libnccl.so.2)");
  sub->add_option("--baseline-nccl-lib", options->baseline_nccl_lib,
                  "The upgrade check: OLD, the NCCL library --nccl-lib NEW is compared with, in interleaved "
                  "rounds of fresh workers; exit 1 when a size regresses beyond --max-regression and the noise")
      ->type_name("OLD");
  const auto upgrade_flag = [options](const char* name) {
    return [options, name](const auto&) { options->upgrade_flags_given.emplace_back(name); };
  };
  sub->add_option("--ops", options->ops,
                  "With --baseline-nccl-lib: several collectives, comma-separated (all_reduce,all_gather)")
      ->each(upgrade_flag("--ops"));
  sub->add_option("--rounds", options->rounds, "With --baseline-nccl-lib: rounds of OLD then NEW")
      ->each(upgrade_flag("--rounds"))
      ->capture_default_str();
  sub->add_option("--max-regression", options->max_regression_percent,
                  "With --baseline-nccl-lib: exit 1 when NEW is slower than OLD by more than PCT% (and the noise) at "
                  "some size (above 0, below 100)")
      ->each(upgrade_flag("--max-regression"))
      ->type_name("PCT")
      ->capture_default_str();
  sub->add_option("--profile", options->profile,
                  "With --baseline-nccl-lib: also run each library with this profile's env and nccltune's tuner "
                  "plugin, and say whether the profile still helps on NEW")
      ->each(upgrade_flag("--profile"))
      ->type_name("FILE");
  sub->add_option("--init-timeout", options->init_timeout_s,
                  "Seconds a worker may take to load and initialise NCCL")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--size-timeout", options->size_timeout_s, "Seconds one size may take")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--from", options->from,
                  "The node whose peak the busbw is read against: a snapshot DIR, nvidia-smi:FILE or "
                  "hwloc:FILE (default: this machine)");
  sub->add_option("--min-busbw", options->min_busbw,
                  "Exit 1 when the busbw at the largest size is below GBPS GB/s (health check)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("GBPS");
  sub->add_option("--min-peak-pct", options->min_peak_percent,
                  "Exit 1 when the busbw at the largest size is below P% of the hardware peak (80 needs "
                  "large sizes: -e 1G or more)")
      ->check(CLI::Range(0.0, 1000.0))
      ->type_name("P");
  sub->add_flag("--nccl-log", options->nccl_log,
                "Run NCCL with NCCL_DEBUG=INFO (into a private temporary directory) and print, after the "
                "table, what NCCL said it did: transport, HCAs, GPUDirect RDMA, NVLS, its per-size choices, "
                "and explain's verdicts");
  sub->add_option("--repeat", options->repeat,
                  "Run the trial N times in this job and print each one's wall time")
      ->group("");  // hidden: for bench/trial_overhead.sh
  sub->callback([options, &command, argc, argv] {
    command.run = [options, argc, argv] {
      // What only the command line knows: the job says it once MPI is up (rank 0, exit 3), the
      // flags' before the other options', --from's after them.
      options->flag_problem = unsupported_flag_error(options->unsupported);
      if (options->flag_problem.empty()) options->flag_problem = upgrade_option_problem(*options);
      if (!options->from.empty())  // "" is this machine; a named node that is not there is a typo
        options->from_problem = unreadable_source(options->from);
      return run_bench_job(*options, argc, argv);
    };
  });
}

}  // namespace nccltune::cli
