#include "bench_job/bench_upgrade.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "bench_job/bench_job.h"
#include "collectives/bus_bandwidth.h"
#include "collectives/library_versions.h"
#include "collectives/worker_process.h"
#include "profile/profile.h"
#include "upgrade/upgrade_comparison.h"
#include "upgrade/upgrade_json.h"

namespace nccltune {

namespace {

constexpr const char* kUpgradeWho = "nccltune bench";

// This rank's NCCL version from `lib` (with the CUDA driver the spec names), or why not, as the
// flag that named it says it.
Result<std::string> upgrade_library_version(const std::string& flag, const std::string& lib,
                                            const std::string& cuda_lib) {
  const LibraryVersions versions = read_library_versions({lib, cuda_lib});
  if (!versions.nccl.empty()) return versions.nccl;
  for (const std::string& note : versions.notes)
    if (note.rfind("NCCL version unknown: ", 0) == 0) {
      if (note.find("missing symbol ncclGetVersion") != std::string::npos)
        return Error{flag + ": " + lib + ": not an NCCL library (it has no ncclGetVersion)"};
      return Error{flag + ": " + note.substr(sizeof("NCCL version unknown: ") - 1)};
    }
  return Error{flag + ": " + lib + ": cannot be loaded"};
}

// The first non-empty line of every rank's `problem`, on every rank ("" when none has one);
// with more than one rank it names the rank.
std::string first_problem(MpiSession& mpi, const std::string& problem) {
  if (mpi.max(problem.empty() ? 0 : 1) == 0) return "";
  const std::vector<std::string> problems =
      mpi.gather(problem.empty() || mpi.size() == 1 ? problem : "rank " + std::to_string(mpi.rank()) + ": " + problem);
  const auto first = std::find_if(problems.begin(), problems.end(), [](const auto& p) { return !p.empty(); });
  return first == problems.end() ? problem : *first;
}

// Every rank's version of one library; a rank whose version is not rank 0's loads another file.
std::string version_mismatch(MpiSession& mpi, const std::string& flag, const std::string& version) {
  const std::vector<std::string> versions = mpi.gather(version);
  for (std::size_t rank = 1; rank < versions.size(); ++rank)
    if (versions[rank] != versions[0])
      return fmt::format("{}: different NCCL libraries on different ranks: rank 0 loads {}, rank {} loads {} "
                         "(give every rank the same file)",
                         flag, versions[0], rank, versions[rank]);
  return "";
}

// Per point, the out-of-place busbw of one trial.
std::vector<double> trial_busbw(const TrialResult& trial, int ranks) {
  std::vector<double> busbw;
  for (std::size_t i = 0; i < trial.sizes.size(); ++i)
    busbw.push_back(bus_bandwidth_gbps(trial.ops[i], ranks, trial.sizes[i].bytes, trial.sizes[i].out_of_place_us));
  return busbw;
}

struct UpgradeArmSpec {
  std::string name;  // "OLD", "NEW", "OLD+profile", "NEW+profile"
  TrialSpec spec;
  RoundCurves* rounds;
};

}  // namespace

int run_upgrade_bench(MpiSession& mpi, const UpgradeBenchRequest& request) {
  const auto fail_input = [&](const std::string& line) {
    if (mpi.rank() == 0) print_error_line(kUpgradeWho, line);
    return kBenchInputError;
  };
  const std::string& cuda_lib = request.spec.config.cuda_lib;
  // Both libraries on every rank, before any worker: one that does not load or has no
  // ncclGetVersion, or a rank that loads another version than rank 0, stops every rank.
  Result<std::string> old_version = upgrade_library_version("--baseline-nccl-lib", request.old_lib, cuda_lib);
  Result<std::string> new_version = upgrade_library_version("--nccl-lib", request.new_lib, cuda_lib);
  std::string problem = !old_version ? old_version.error() : !new_version ? new_version.error() : "";
  if (std::string first = first_problem(mpi, problem); !first.empty()) return fail_input(first);
  problem = version_mismatch(mpi, "--baseline-nccl-lib", *old_version);
  if (problem.empty()) problem = version_mismatch(mpi, "--nccl-lib", *new_version);
  if (!problem.empty()) return fail_input(problem);

  UpgradeInput input;
  input.old_nccl = {request.old_lib, *old_version};
  input.new_nccl = {request.new_lib, *new_version};
  input.max_regression_percent = request.max_regression_percent;
  std::vector<UpgradeArmSpec> arms;
  arms.push_back({"OLD", request.spec, &input.old_rounds});
  arms.back().spec.config.nccl_lib = request.old_lib;
  arms.push_back({"NEW", request.spec, &input.new_rounds});
  arms.back().spec.config.nccl_lib = request.new_lib;
  if (!request.profile_path.empty()) {
    // Every rank reads the profile (its tuner plugin does too): one that cannot stops them all.
    Result<Profile> profile = read_profile(request.profile_path);
    const std::string plugin = installed_tuner_plugin();
    problem = !profile ? "--profile: " + profile.error()
              : plugin.empty() ? "--profile: libnccl-tuner-nccltune.so is not next to nccltune (or in ../lib)"
                               : "";
    if (std::string first = first_problem(mpi, problem); !first.empty()) return fail_input(first);
    input.profile_path = request.profile_path;
    input.profile_nccl = nccl_major_minor(profile->shape.nccl_version);
    for (int i = 0; i < 2; ++i) {
      UpgradeArmSpec arm = arms[static_cast<std::size_t>(i)];
      arm.name += "+profile";
      arm.rounds = i == 0 ? &input.old_profile_rounds : &input.new_profile_rounds;
      for (const auto& [name, value] : profile->env) arm.spec.env[name] = value;
      arm.spec.env["NCCLTUNE_PROFILE"] = std::filesystem::absolute(request.profile_path).string();
      arm.spec.env["NCCL_TUNER_PLUGIN"] = plugin;
      arm.spec.config.tuner_plugin = plugin;
      arms.push_back(std::move(arm));
    }
  }
  if (mpi.rank() == 0) {
    std::cout << fmt::format(
        "# nccltune bench: NCCL upgrade check ({} ranks, {} node{}), {} round{} of fresh workers: ",
        mpi.size(), mpi.layout().nodes, mpi.layout().nodes == 1 ? "" : "s", request.rounds,
        request.rounds == 1 ? "" : "s");
    for (std::size_t i = 0; i < arms.size(); ++i) std::cout << (i ? ", " : "") << arms[i].name;
    std::cout << "\n# OLD: NCCL " << *old_version << " (" << printable_excerpt(request.old_lib, 200) << ")\n"
              << "# NEW: NCCL " << *new_version << " (" << printable_excerpt(request.new_lib, 200) << ")\n";
    if (*old_version == *new_version)
      std::cout << "# Both libraries report NCCL " << *old_version
                << ": this compares two builds of one version, not an upgrade\n";
    // Inside a job whose TaskProlog exported a profile, both libraries run under its settings, not
    // NCCL's defaults: say which.
    std::cout << (request.spec.env.empty()
                      ? std::string("# NCCL_* from the environment: none, so NCCL's defaults on both\n")
                      : "# NCCL_* from the environment, on both: " +
                            printable_excerpt(describe_env(request.spec.env), 400) +
                            " (unset them to compare NCCL's defaults)\n");
    std::cout << std::flush;
  }
  for (int round = 0; round < request.rounds; ++round) {
    for (UpgradeArmSpec& arm : arms) {
      const TrialResult trial = run_trial(mpi, arm.spec);
      if (trial.outcome != TrialOutcome::ok) {
        if (mpi.rank() == 0)
          print_error_line(kUpgradeWho, fmt::format("{} round {}: trial {}: {}", arm.name, round + 1,
                                                    to_string(trial.outcome), trial.reason));
        return 1;
      }
      if (input.sizes.empty())
        for (const SizeMeasurement& size : trial.sizes) input.sizes.push_back(size.bytes);
      if (input.ops.empty()) input.ops = trial.ops;
      arm.rounds->push_back(trial_busbw(trial, mpi.size()));
    }
    if (mpi.rank() == 0) std::cout << fmt::format("# round {} of {} done\n", round + 1, request.rounds) << std::flush;
  }
  if (mpi.rank() != 0) return 0;
  const UpgradeComparison comparison = compare_upgrade(input);
  std::cout << render_upgrade_table(comparison) << std::flush;
  if (!request.json_path.empty()) {
    auto written = write_file_atomically(
        request.json_path,
        upgrade_to_json(comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!written) {
      print_error_line(kUpgradeWho, written.error());
      return 1;
    }
  }
  return comparison.regressed() ? 1 : 0;
}

}  // namespace nccltune
