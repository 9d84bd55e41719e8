// `nccltune fleet`: MPI-launched survey of a whole allocation that names the nodes and links
// that hold it back. Exit codes as `check`: 0 clean, 1 warnings, 2 a suspect or a failed node,
// 3 bad input.
//   mpirun -np 64 --map-by ppr:8:node nccltune fleet --format slurm-drain
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "base/byte_size.h"
#include "base/duration.h"
#include "base/printable_text.h"
#include "cli/commands.h"
#include "cli/usage_error.h"
#include "collectives/collective_spec.h"
#include "fleet_job/fleet_job.h"
#include "mpi_runtime/launcher.h"
#include "mpi_runtime/mpi_session.h"
#include "topology/checks.h"

namespace nccltune::cli {

namespace {

struct FleetFlags {
  FleetOptions options;
  std::string bytes = "1G", small_bytes = "8K";
  std::string budget = "30m";
  std::string format = "text";
  std::string expect;
  std::optional<double> min_peak_pct, outlier;
};

// One line naming the first bad flag, or "" when every flag holds. Thresholds: a flag, else the
// expectation file (`check --expect`'s, same names), else the defaults.
std::string apply_flags(FleetFlags& flags) {
  FleetOptions& o = flags.options;
  if (find_collective(o.collective) == nullptr) {
    const std::string near = closest_collective(o.collective);
    return "--collective: unknown collective '" + printable_excerpt(o.collective, 60) + "'" +
           (near.empty() ? " (one of " + collective_names() + ")" : " (did you mean " + near + "?)");
  }
  auto bytes = parse_byte_size(flags.bytes);
  if (!bytes || *bytes == 0) return "--bytes " + (bytes ? std::string("must be positive") : bytes.error());
  auto small = parse_byte_size(flags.small_bytes);
  if (!small || *small == 0 || *small > *bytes)
    return "--small-bytes " + (small ? std::string("must be positive and at most --bytes") : small.error());
  o.bytes = *bytes;
  o.small_bytes = *small;
  auto budget = parse_duration(flags.budget, std::chrono::seconds(10), std::chrono::hours(24 * 7));
  if (!budget) return "--budget " + budget.error();
  o.budget = *budget;
  if (!flags.expect.empty()) {
    auto expectation = read_expectation(flags.expect);
    if (!expectation) return "--expect " + expectation.error();
    if (expectation->min_peak_pct) o.thresholds.min_peak_pct = *expectation->min_peak_pct;
    if (expectation->outlier) o.thresholds.outlier = *expectation->outlier;
  }
  if (flags.min_peak_pct) o.thresholds.min_peak_pct = *flags.min_peak_pct;
  if (flags.outlier) o.thresholds.outlier = *flags.outlier;
  o.format = flags.format == "json"          ? FleetFormat::json
             : flags.format == "slurm-drain" ? FleetFormat::slurm_drain
                                             : FleetFormat::text;
  return "";
}

// --outlier is a fraction of the median, not a percentage: "85" says so and what to write instead.
CLI::Validator outlier_fraction() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value))
          return "'" + printable_excerpt(text, 40) +
                 "' is not a number; give a fraction of the median, 0.01 to 0.99";
        if (value >= 0.01 && value <= 0.99) return "";
        if (value >= 10 && value < 100)  // 85 for 85%
          return fmt::format(
              "{:g} is a percentage; --outlier takes a fraction of the median, 0.01 to 0.99 "
              "({:g}% is {:g})",
              value, value, value / 100);
        return fmt::format(
            "{:g} is outside 0.01 to 0.99; --outlier takes a fraction of the median (0.85 is 85%)", value);
      },
      "FRACTION");
}

int run_fleet(FleetFlags flags, int* argc, char*** argv) {
  if (!check_launcher("nccltune fleet")) return kInputError;
  auto session = MpiSession::start(argc, argv);
  if (!session) {
    print_error_line("nccltune fleet", session.error());
    return kInputError;
  }
  MpiSession& mpi = **session;
  if (const std::string problem = apply_flags(flags); !problem.empty()) {
    if (mpi.rank() == 0) print_error_line("nccltune fleet", problem);
    return kInputError;
  }
  return run_fleet_job(mpi, mpi.layout(), flags.options);
}

}  // namespace

void add_fleet_command(CLI::App& app, Command& command, int* argc, char*** argv) {
  auto flags = std::make_shared<FleetFlags>();
  FleetOptions& o = flags->options;
  auto* sub = app.add_subcommand(
      "fleet",
      "MPI-launched survey of the allocation: each node alone, then node pairs in rounds; names "
      "the slow nodes and links (exit 0 clean, 1 warn, 2 suspect or failed node, 3 bad input)");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  sub->add_option("--collective", o.collective, "Collective measured (nccl-tests name)")
      ->capture_default_str();
  sub->add_option("--bytes", flags->bytes, "Bandwidth size, e.g. 1G")->capture_default_str();
  sub->add_option("--small-bytes", flags->small_bytes, "Latency size")->capture_default_str();
  sub->add_option("--repeats", o.repeats, "Measurements per group (the fleet's noise comes from them)")
      ->check(CLI::Range(2, 20))
      ->capture_default_str();
  sub->add_option("--iterations", o.iterations, "Timed iterations per size and repeat")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  sub->add_option("--rounds", o.rounds,
                  "Rounds of pairs: a count, or all (every pair); default: 3 partners each");
  sub->add_option("--min-peak-pct", flags->min_peak_pct, "Warn below this % of the peak model (default 80)")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_option("--outlier", flags->outlier,
                  "Slow: below this fraction of the fleet's median, 0.01 to 0.99 (default 0.85, i.e. 85%)")
      ->type_name("FRACTION")
      ->check(outlier_fraction());
  sub->add_option("--expect", flags->expect, "check's expectation file: min_peak_pct and outlier");
  sub->add_option("--format", flags->format, "text, json or slurm-drain")
      ->check(CLI::IsMember({"text", "json", "slurm-drain"}))
      ->capture_default_str();
  sub->add_option("--out", o.out, "Also write the survey's JSON here (report --fleet, nccltuned read it)");
  sub->add_option("--from", o.from,
                  "Topology for the peak model: a snapshot dir or nvidia-smi file (A,B,...: per node)");
  sub->add_option("--budget", flags->budget, "Time budget, e.g. 10m: rounds that do not fit are skipped")
      ->capture_default_str();
  sub->add_option("--init-timeout", o.init_timeout_s, "Seconds a group may take to start NCCL")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--size-timeout", o.size_timeout_s, "Seconds one size may take")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--cuda-lib", o.cuda_lib,
                  "CUDA driver library (default: $NCCLTUNE_CUDA_LIB or libcuda.so.1)");
  sub->add_option("--nccl-lib", o.nccl_lib, "NCCL library (default: $NCCLTUNE_NCCL_LIB or libnccl.so.2)");
  sub->callback([flags, &command, argc, argv] {
    command.run = [flags, argc, argv] { return run_fleet(*flags, argc, argv); };
  });
}

}  // namespace nccltune::cli
