// `nccltune bench`: MPI-launched, one worker process per rank, printing nccl-tests' table.
//   mpirun -np 8 nccltune bench -b 8 -e 1G -f 2 [--op all_reduce] [--json FILE | -J FILE]
//     [--from SRC] [--min-busbw GBPS] [--min-peak-pct P] [--nccl-log]
//   mpirun -np 8 nccltune bench --nccl-lib NEW --baseline-nccl-lib OLD [--rounds N] [--ops a,b]
//     [--max-regression PCT] [--profile FILE]: the upgrade check (cli/bench_upgrade.h)
// nccl-tests' other flags are taken where the worker does what they ask; the rest stop bench with
// one line saying why (kUnsupportedFlags), unless given nccl-tests' default.
// Exit 0, or 1 when a trial failed, the data was wrong or the busbw is below a threshold; 2 when a
// threshold cannot be judged (peak unknown); 3 on a usage error, or a CUDA driver or NCCL library
// that cannot be loaded (found before any table line, by every rank).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/atomic_file.h"
#include "base/byte_size.h"
#include "base/printable_text.h"
#include "cli/bench_peak_input.h"
#include "cli/bench_upgrade.h"
#include "cli/commands.h"
#include "cli/topology_input.h"
#include "collectives/bench_json.h"
#include "collectives/bench_peak.h"
#include "collectives/bench_table.h"
#include "collectives/bus_bandwidth.h"
#include "collectives/collective_spec.h"
#include "collectives/library_versions.h"
#include "collectives/nccl_info_log.h"
#include "collectives/nccl_library.h"
#include "mpi_runtime/launcher.h"
#include "mpi_runtime/mpi_session.h"
#include "mpi_runtime/nccl_log_capture.h"
#include "mpi_runtime/trial_runner.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "upgrade/upgrade_comparison.h"

extern char** environ;

namespace nccltune::cli {

namespace {

struct BenchOptions {
  std::string min_bytes = "32M", max_bytes = "32M", step_bytes = "1M";
  double step_factor = 1;
  int iterations = 20, warmup = 5, check = 1, root = 0;
  int average = 1;            // -a: 0 rank 0, 1 mean over ranks (nccl-tests' default), 2 min, 3 max
  int gpus = 1, threads = 1;  // -g, -t: nccl-tests' GPUs per thread and threads per process
  std::string type = "float", redop = "sum", collective = "all_reduce";
  std::string json_path;
  std::string cuda_lib, nccl_lib;
  double init_timeout_s = 120, size_timeout_s = 60;
  int repeat = 1;    // hidden: N trials in one job, each one's wall time on rank 0 (bench/trial_overhead.sh)
  std::string from;  // the node the peak is computed for; empty: this machine
  ReadOptions read_options;
  double min_busbw = -1, min_peak_percent = -1;  // health thresholds; negative: not given
  bool nccl_log = false;  // run NCCL with NCCL_DEBUG=INFO and print what explain reads from it
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> unsupported;  // nccl-tests flags given: name, value
  // The upgrade check (cli/bench_upgrade.h): OLD, and what it takes besides.
  std::string baseline_nccl_lib;
  std::string ops;  // --ops all_reduce,all_gather: several collectives, with --baseline-nccl-lib
  int rounds = 3;
  double max_regression_percent = kDefaultMaxRegressionPercent;
  std::string profile;
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

std::vector<std::string> split_ops(const std::string& list) {
  std::vector<std::string> ops;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    ops.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return ops;
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

Result<TrialSpec> trial_spec(const BenchOptions& o, const MpiSession& mpi) {
  TrialSpec spec;
  for (char** entry = environ; *entry; ++entry) {  // the user's NCCL_* settings are what bench measures
    std::string_view text(*entry);
    if (text.rfind("NCCL_", 0) == 0 && text.find('=') != std::string_view::npos)
      spec.env[std::string(text.substr(0, text.find('=')))] = std::string(text.substr(text.find('=') + 1));
  }
  if (const std::string unsupported = unsupported_flag_error(o.unsupported); !unsupported.empty())
    return Error{unsupported};
  WorkerConfig& c = spec.config;
  c.rank = mpi.rank();
  c.nranks = mpi.size();
  c.device = mpi.layout().local_rank;
  const LocalLibraries libraries = choose_libraries(o.cuda_lib, o.nccl_lib);
  c.cuda_lib = libraries.cuda_lib;
  c.nccl_lib = libraries.nccl_lib;
  if (const std::string problem = upgrade_option_problem(o); !problem.empty()) return Error{problem};
  c.collectives = {o.collective};
  if (!o.ops.empty()) c.collectives = split_ops(o.ops);
  for (const std::string& op : c.collectives)
    if (!find_collective(op))
      return Error{(o.ops.empty() ? "--op " : "--ops ") + op + ": unknown collective (known: " + collective_names() +
                   ")"};
  for (const auto& [flag, value] : {std::pair{"-g", o.gpus}, std::pair{"-t", o.threads}})
    if (value != 1)
      return Error{std::string(flag) + " " + std::to_string(value) +
                   ": nccltune bench runs one rank (one process) per GPU; start one rank per GPU instead "
                   "(mpirun -np <GPUs>, srun --mpi=pmix -n <GPUs>)"};
  static constexpr TimeRule kRules[] = {TimeRule::rank0, TimeRule::average, TimeRule::min, TimeRule::max};
  spec.time_rule = kRules[o.average];
  auto min = parse_byte_size(o.min_bytes);
  auto max = parse_byte_size(o.max_bytes);
  auto step = parse_byte_size(o.step_bytes);
  if (!min) return Error{"-b " + min.error()};
  if (!max) return Error{"-e " + max.error()};
  if (!step) return Error{"-i " + step.error()};
  c.sweep.min_bytes = *min;
  c.sweep.max_bytes = *max;
  c.sweep.step_bytes = *step;
  c.sweep.step_factor = o.step_factor;
  c.sweep.iterations = o.iterations;
  c.sweep.warmup = o.warmup;
  c.sweep.check = o.check != 0;
  c.sweep.root = o.root;
  auto type = parse_data_type(o.type);
  if (!type) return Error{"-d " + type.error()};
  c.sweep.type = *type;
  auto redop = parse_reduction_op(o.redop);
  if (!redop) return Error{"-o " + redop.error()};
  c.sweep.op = *redop;
  if (auto valid = validate(c.sweep, mpi.size()); !valid) return Error{valid.error()};
  spec.init_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.init_timeout_s * 1000));
  spec.size_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.size_timeout_s * 1000));
  return spec;
}

BenchResult bench_result(const BenchOptions& o, const TrialSpec& spec, const TrialResult& trial,
                         const MpiSession& mpi) {
  const CollectiveSpec& collective = *find_collective(o.collective);
  BenchResult result;
  result.op = o.collective;
  result.ranks = mpi.size();
  result.nodes = mpi.layout().nodes;
  result.dtype = std::string(to_string(spec.config.sweep.type));
  result.time_rule = std::string(to_string(spec.time_rule));
  auto measurement = [&](size_t bytes, double time_us, std::optional<int64_t> wrong) {
    Measurement m;
    m.time_us = time_us;
    m.algbw = algorithm_bandwidth_gbps(static_cast<double>(bytes), time_us);
    m.busbw = bus_bandwidth_gbps(o.collective, mpi.size(), bytes, time_us);
    m.wrong = wrong;
    return m;
  };
  double busbw_sum = 0;
  int busbw_count = 0;
  for (const auto& size : trial.sizes) {
    BenchRow row;
    row.bytes = static_cast<int64_t>(size.bytes);
    row.count = static_cast<int64_t>(size.count);
    row.type = result.dtype;
    row.redop = collective.reduces() ? o.redop : "none";
    row.root = collective.uses_root() ? o.root : -1;
    row.out_of_place = measurement(size.bytes, size.out_of_place_us, size.out_of_place_wrong);
    busbw_sum += row.out_of_place.busbw;
    ++busbw_count;
    if (size.in_place_us) {
      row.in_place = measurement(size.bytes, *size.in_place_us, size.in_place_wrong);
      busbw_sum += row.in_place->busbw;
      ++busbw_count;
    }
    result.rows.push_back(row);
  }
  if (busbw_count > 0) result.avg_busbw = busbw_sum / busbw_count;
  result.context.hosts = mpi.layout().hosts;
  if (trial.nccl_version > 0) result.context.nccl_version = nccl_version_string(trial.nccl_version);
  if (trial.cuda_driver > 0) result.context.cuda_driver = cuda_driver_version_string(trial.cuda_driver);
  result.context.argv = o.argv;
  result.context.env = spec.env;
  return result;
}

std::string header(const BenchOptions& o, const TrialSpec& spec, const std::vector<std::string>& devices) {
  const auto& s = spec.config.sweep;
  std::string out =
      fmt::format("# nccltune bench: {} ({} ranks, worker process per rank)\n", o.collective, devices.size());
  out += fmt::format(
      "# nThread 1 nGpus 1 minBytes {} maxBytes {} step: {}({}) warmup iters: {} iters: {} agg iters: 1 "
      "validation: {} graph: 0\n",
      s.min_bytes, s.max_bytes,
      s.step_factor > 1 ? fmt::format("{:g}", s.step_factor) : std::to_string(s.step_bytes),
      s.step_factor > 1 ? "factor" : "bytes", s.warmup, s.iterations, s.check ? 1 : 0);
  out += "#\n# Using devices\n";
  for (const auto& line : devices) out += line;
  return out;
}

// --nccl-log: each rank's workers log into a private directory of that rank; rank 0 reads them
// all as `nccltune explain` does, against --from (or this machine) when that topology reads.
std::string nccl_log_summary(const std::vector<std::string>& rank_logs, const BenchOptions& options) {
  NcclInfoLogReader reader;
  for (std::size_t rank = 0; rank < rank_logs.size(); ++rank)
    reader.add(rank_logs[rank], "rank " + std::to_string(rank));
  std::optional<NodeTopology> node;
  if (auto source = parse_topology_source(options.from))
    if (auto topology = read_node_topology(*source, options.read_options)) node = std::move(*topology);
  const NcclInfoLog log = reader.result();
  return "#\n# What NCCL said it did (NCCL_DEBUG=INFO of every rank, as `nccltune explain` reads it):\n" +
         render_nccl_log_text(log, explain_nccl_log(log, node ? &*node : nullptr));
}

// Why this rank cannot load the CUDA driver or NCCL, as one line naming where the library came
// from (the flag, the variable or the default); "" when both load.
std::string library_problem(const BenchOptions& o) {
  const LocalLibraries libraries = choose_libraries(o.cuda_lib, o.nccl_lib);
  const LibraryVersions versions = read_library_versions(libraries);
  const auto named = [](const std::string& flag, const char* variable, const std::string& path) {
    if (!flag.empty()) return flag;
    if (const char* value = std::getenv(variable); value && *value) return std::string("$") + variable;
    return path + " (the default)";
  };
  const auto note = [&](std::string_view start) {
    for (const std::string& line : versions.notes)
      if (line.rfind(start, 0) == 0) return line.substr(std::min(line.size(), start.size() + 2));
    return std::string(start) + ": cannot be loaded";
  };
  if (versions.nccl_file.path.empty())
    return named(o.nccl_lib.empty() ? "" : "--nccl-lib", "NCCLTUNE_NCCL_LIB", libraries.nccl_lib) + ": " +
           note("NCCL version unknown");
  if (versions.cuda_file.path.empty())
    return named(o.cuda_lib.empty() ? "" : "--cuda-lib", "NCCLTUNE_CUDA_LIB", libraries.cuda_lib) + ": " +
           note("CUDA driver version unknown");
  return "";
}

int run_bench(BenchOptions options, int* argc, char*** argv) {
  if (!check_launcher("nccltune bench")) return kInputError;
  auto session = MpiSession::start(argc, argv);
  if (!session) {
    print_error_line("nccltune bench", session.error());
    return kInputError;
  }
  MpiSession& mpi = **session;
  auto spec = trial_spec(options, mpi);
  if (spec && !options.from.empty())  // "" is this machine; a named node that is not there is a typo
    if (std::string problem = unreadable_source(options.from); !problem.empty()) spec = Error{problem};
  if (!spec) {
    if (mpi.rank() == 0) print_error_line("nccltune bench", spec.error());
    return kInputError;
  }
  // A broken install is not a slow node: every rank loads both libraries before any worker starts
  // or any table line is printed, and all of them stop when one cannot (rank 0 says which).
  const std::string problem = library_problem(options);
  if (mpi.max(problem.empty() ? 0 : 1) != 0) {
    const std::vector<std::string> problems = mpi.gather(
        problem.empty() || mpi.size() == 1 ? problem : "rank " + std::to_string(mpi.rank()) + ": " + problem);
    if (mpi.rank() == 0) {
      const auto first =
          std::find_if(problems.begin(), problems.end(), [](const auto& p) { return !p.empty(); });
      print_error_line("nccltune bench", first == problems.end() ? problem : *first);
    }
    return kInputError;
  }
  if (!options.baseline_nccl_lib.empty())
    return run_upgrade_bench(mpi, {*spec, spec->config.nccl_lib, options.baseline_nccl_lib, options.rounds,
                                   options.max_regression_percent, options.profile, options.json_path});
  // The trial runs with the capture's variables; the table and the JSON keep the user's.
  TrialSpec measured = *spec;
  std::optional<NcclLogCapture> capture;
  std::string capture_error;
  if (options.nccl_log) {
    auto made = NcclLogCapture::create();
    if (made) {
      capture.emplace(std::move(*made));
      capture->add_to(measured.env);
    } else {
      capture_error = "# nccltune: rank " + std::to_string(mpi.rank()) + ": " + made.error() + "\n";
    }
  }
  TrialResult trial;
  std::vector<double> trial_ms;
  for (int i = 0; i < std::max(1, options.repeat); ++i) {
    const auto start = std::chrono::steady_clock::now();
    trial = run_trial(mpi, measured);
    trial_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (trial.outcome != TrialOutcome::ok) break;
  }
  std::string pci =
      trial.device.pci.size() > 10 ? trial.device.pci.substr(0, 10) : trial.device.pci;  // [0000:18:00]
  const auto devices =
      mpi.gather(fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on {:>10} device {:2d} [{}] {}\n", mpi.rank(),
                             getpid(), mpi.layout().hosts[static_cast<size_t>(mpi.layout().node)],
                             spec->config.device, pci, trial.device.name));
  std::vector<std::string> rank_logs;
  if (options.nccl_log) rank_logs = mpi.gather(capture ? capture->read_all() : capture_error);
  if (mpi.rank() != 0) return trial.outcome == TrialOutcome::ok ? 0 : 1;

  std::cout << header(options, *spec, devices);
  if (trial.nccl_version > 0) std::cout << "NCCL version " << nccl_version_string(trial.nccl_version) << "\n";
  if (trial.outcome != TrialOutcome::ok && trial.outcome != TrialOutcome::wrong_data) {
    std::fprintf(stderr, "nccltune bench: trial %s: %s\n", std::string(to_string(trial.outcome)).c_str(),
                 trial.reason.c_str());
    if (options.nccl_log) std::cout << nccl_log_summary(rank_logs, options) << std::flush;  // why it failed
    return 1;
  }
  BenchResult result = bench_result(options, *spec, trial, mpi);
  result.peak =
      read_bench_peak(options.from, options.read_options, options.collective, result.nodes, result.ranks);
  std::cout << render_bench_table(result) << std::flush;
  if (options.repeat > 1) {
    for (size_t i = 0; i < trial_ms.size(); ++i)
      std::cout << fmt::format("# Trial {:4d} wall time : {:.2f} ms\n", i + 1, trial_ms[i]);
    std::sort(trial_ms.begin(), trial_ms.end());
    std::cout << fmt::format(
                     "# Trial wall time      : {} trials, min {:.2f} ms, median {:.2f} ms, max {:.2f} ms\n",
                     trial_ms.size(), trial_ms.front(), trial_ms[trial_ms.size() / 2], trial_ms.back())
              << std::flush;
  }
  if (options.nccl_log) std::cout << nccl_log_summary(rank_logs, options) << std::flush;
  if (!options.json_path.empty()) {
    auto written = write_file_atomically(
        options.json_path,
        bench_result_to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!written) {
      print_error_line("nccltune bench", written.error());
      return 1;
    }
  }
  if (trial.outcome == TrialOutcome::wrong_data) {
    std::fprintf(stderr, "nccltune bench: wrong data: %s\n", trial.reason.c_str());
    return 1;
  }
  BusbwThresholds thresholds;
  if (options.min_busbw >= 0) thresholds.min_busbw_gbps = options.min_busbw;
  if (options.min_peak_percent >= 0) thresholds.min_peak_percent = options.min_peak_percent;
  const BusbwVerdict verdict = judge_busbw(result, thresholds);
  if (verdict.exit_code == 0) {
    if (!verdict.line.empty()) std::cout << "# " << verdict.line << "\n";
  } else {
    print_error_line("nccltune bench", verdict.line);
  }
  return verdict.exit_code;
}

}  // namespace

void add_bench_command(CLI::App& app, Command& command, int* argc, char*** argv) {
  auto options = std::make_shared<BenchOptions>();
  for (int i = 0; i < *argc; ++i) options->argv.emplace_back((*argv)[i]);
  auto* sub = app.add_subcommand(
      "bench", "MPI-launched collective benchmark printing nccl-tests' table (mpirun -np N nccltune bench)");
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
    command.run = [options, argc, argv] { return run_bench(*options, argc, argv); };
  });
}

}  // namespace nccltune::cli
