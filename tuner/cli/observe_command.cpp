// `nccltune observe DIR... [--profiles STORE --node-type KEY | --profile FILE] [--format text|json]
// [--out FILE]`: what a job's collectives did, from NCCL Inspector's JSON records (every rank's
// <hostname>-pid<pid>.log under DIR) and Prometheus textfiles (every GPU's
// nccl_inspector_metrics_<UUID>.prom), against the profile it ran with, its stragglers and its
// suspect hosts (observe/observe_report.h). Every bad record is one line on stderr naming the file
// and line; the rest is still read. Exit 0 when every row ran as tuned, 1 when one did not or was
// not measured, 2 with a straggler or a suspect, 3 on a usage error or no records at all.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "cli/commands.h"
#include "node/profile_for_job.h"
#include "observe/inspector_files.h"
#include "observe/observe_output.h"
#include "observe/observe_report.h"
#include "profile/profile.h"

namespace nccltune::cli {

namespace {

constexpr const char* kObservePrefix = "nccltune observe";

struct ObserveOptions {
  std::vector<std::string> dirs;
  std::string profiles, node_type, profile, format = "text", out;
  double tolerance = kDefaultObserveTolerance;
  std::size_t window = kDefaultMatchWindow;
};

// The profile the job ran with: --profile's file, or the store's for --node-type and the node
// count and ranks per node the records show (the serving rule of `nccltune env`).
Result<std::optional<std::pair<Profile, std::string>>> observed_profile(const ObserveOptions& options,
                                                                        const ObservedJob& job) {
  if (!options.profile.empty()) {
    auto profile = read_profile(options.profile);
    if (!profile) return Error{profile.error()};
    return std::optional<std::pair<Profile, std::string>>({std::move(*profile), options.profile});
  }
  if (options.profiles.empty()) return std::optional<std::pair<Profile, std::string>>{};
  const auto [nodes, ranks] = observed_world(job);
  if (nodes < 1) return std::optional<std::pair<Profile, std::string>>{};
  JobShape shape;
  shape.nodes = nodes;
  shape.gpus_per_node = ranks / nodes;
  // On an MNNVL rack NCCL's node is an NVLink domain: more hosts than nodes says so.
  if (is_mnnvl_node_type_key(options.node_type) && int(job.hosts.size()) > nodes)
    shape.hosts = int(job.hosts.size());
  auto found = find_profile_for_job(options.profiles, options.node_type, shape, true, getuid());
  if (!found) return Error{found.error()};
  const Profile* profile = found->profile();
  if (profile == nullptr) {
    std::fprintf(stderr,
                 "%s: %s holds no profile for %s with %d nodes of %d ranks; every row is unmeasured\n",
                 kObservePrefix, printable_excerpt(options.profiles, 200).c_str(),
                 printable_excerpt(options.node_type, 100).c_str(), nodes, ranks / nodes);
    return std::optional<std::pair<Profile, std::string>>{};
  }
  return std::optional<std::pair<Profile, std::string>>(
      {*profile, found->stored ? found->stored->match.file.string() : options.profiles});
}

int run_observe(const ObserveOptions& options) {
  const InspectorFiles files = find_inspector_files(options.dirs);
  ObserveAccumulator accumulator(options.window);
  for (const std::string& problem : files.problems) accumulator.add_problem(problem);
  read_inspector_files(files.files, accumulator);
  read_inspector_prom_files(files.prom_files, accumulator);
  const ObservedJob job = accumulator.finish();
  for (const std::string& problem : accumulator.problems()) print_error_line(kObservePrefix, problem);
  if (job.records == 0) {
    print_error_line(kObservePrefix, "no Inspector collective records read");
    return kInputError;
  }
  auto profile = observed_profile(options, job);
  if (!profile) {
    print_error_line(kObservePrefix, profile.error());
    return kInputError;
  }
  const ObserveReport report =
      build_observe_report(job, options.dirs, *profile ? &(*profile)->first : nullptr,
                           *profile ? (*profile)->second : "", options.tolerance);
  const std::string text =
      options.format == "json" ? render_observe_json(report) : render_observe_text(report);
  if (options.out.empty()) {
    std::cout << text;
  } else if (const Status written = write_file_atomically(options.out, text); !written) {
    print_error_line(kObservePrefix, written.error());
    return kInputError;
  }
  return observe_exit_code(report);
}

}  // namespace

void add_observe_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<ObserveOptions>();
  auto* sub = app.add_subcommand("observe",
                                 "What a job's collectives did (NCCL Inspector's records) against its "
                                 "profile, its stragglers and suspects");
  sub->add_option("DIR", options->dirs,
                  "Inspector's output directories (NCCL_INSPECTOR_DUMP_DIR), read recursively")
      ->required();
  auto* store = sub->add_option("--profiles", options->profiles, "Profile store: the job's profile from it");
  auto* key = sub->add_option("--node-type", options->node_type, "The job's node type key (with --profiles)");
  auto* file = sub->add_option("--profile", options->profile, "The profile the job ran with");
  store->excludes(file)->needs(key);
  key->needs(store);
  sub->add_option("--format", options->format, "text for people, json (nccltune/observe/v1) for scripts")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->add_option("--out", options->out, "Write the output to this file (replaced atomically)");
  sub->add_option("--tolerance", options->tolerance,
                  "A row is as tuned when its median busbw is within this of the profile's")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sub->add_option(
         "--window", options->window,
         "Collectives per communicator waiting for every rank's record; older ones count as unmatched")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  sub->callback([options, &command] { command.run = [options] { return run_observe(*options); }; });
}

}  // namespace nccltune::cli
