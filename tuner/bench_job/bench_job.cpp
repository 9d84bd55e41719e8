#include "bench_job/bench_job.h"

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
#include "base/statistics.h"
#include "bench_job/bench_peak_input.h"
#include "bench_job/bench_upgrade.h"
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

extern char** environ;

namespace nccltune {

namespace {

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

Result<TrialSpec> trial_spec(const BenchJobOptions& o, const MpiSession& mpi) {
  TrialSpec spec;
  for (char** entry = environ; *entry; ++entry) {  // the user's NCCL_* settings are what bench measures
    std::string_view text(*entry);
    if (text.rfind("NCCL_", 0) == 0 && text.find('=') != std::string_view::npos)
      spec.env[std::string(text.substr(0, text.find('=')))] = std::string(text.substr(text.find('=') + 1));
  }
  if (!o.flag_problem.empty()) return Error{o.flag_problem};
  WorkerConfig& c = spec.config;
  c.rank = mpi.rank();
  c.nranks = mpi.size();
  c.device = mpi.layout().local_rank;
  const LocalLibraries libraries = choose_libraries(o.cuda_lib, o.nccl_lib);
  c.cuda_lib = libraries.cuda_lib;
  c.nccl_lib = libraries.nccl_lib;
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

BenchResult bench_result(const BenchJobOptions& o, const TrialSpec& spec, const TrialResult& trial,
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

std::string header(const BenchJobOptions& o, const TrialSpec& spec, const std::vector<std::string>& devices) {
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
std::string nccl_log_summary(const std::vector<std::string>& rank_logs, const BenchJobOptions& options) {
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
std::string library_problem(const BenchJobOptions& o) {
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

}  // namespace

int run_bench_job(const BenchJobOptions& options, int* argc, char*** argv) {
  if (!check_launcher("nccltune bench")) return kBenchInputError;
  auto session = MpiSession::start(argc, argv);
  if (!session) {
    print_error_line("nccltune bench", session.error());
    return kBenchInputError;
  }
  MpiSession& mpi = **session;
  auto spec = trial_spec(options, mpi);
  if (spec && !options.from_problem.empty()) spec = Error{options.from_problem};
  if (!spec) {
    if (mpi.rank() == 0) print_error_line("nccltune bench", spec.error());
    return kBenchInputError;
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
    return kBenchInputError;
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
                     trial_ms.size(), trial_ms.front(), median(trial_ms), trial_ms.back())
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

}  // namespace nccltune
