#include "tune/trial_protocol.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "collectives/bus_bandwidth.h"
#include "mpi_runtime/nccl_log_capture.h"
#include "nccl_log/node_log_summary.h"
#include "profile/nccl_names.h"

namespace nccltune {

namespace {

using nlohmann::json;

json pairs_to_json(const std::vector<NcclChoice>& pairs) {
  json out = json::array();
  for (const NcclChoice& pair : pairs) out.push_back({pair.algo, pair.proto});
  return out;
}

json request_to_json(const TrialRequest& r) {
  return {{"env", r.env},
          {"phase", to_string(r.phase)},
          {"min", r.grid.min_bytes},
          {"max", r.grid.max_bytes},
          {"factor", r.grid.factor},
          {"sizes", r.sizes},
          {"iterations", r.iterations},
          {"warmup", r.warmup},
          {"repeat", r.repeat},
          {"collectives", r.collectives},
          {"pairs", pairs_to_json(r.pairs)},
          {"plugin_profile", r.plugin_profile},
          {"comms", r.comms}};
}

TrialRequest request_from_json(const json& j) {
  TrialRequest r;
  r.env = j.at("env").get<Env>();
  r.phase = parse_trial_phase(j.at("phase").get<std::string>()).value_or(TrialPhase::screen);
  r.grid = {j.at("min").get<std::uint64_t>(), j.at("max").get<std::uint64_t>(), j.at("factor").get<double>()};
  r.sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
  r.iterations = j.at("iterations").get<int>();
  r.warmup = j.at("warmup").get<int>();
  r.repeat = j.at("repeat").get<int>();
  r.collectives = j.at("collectives").get<std::vector<std::string>>();
  for (const auto& pair : j.at("pairs"))
    r.pairs.push_back({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
  r.plugin_profile = j.at("plugin_profile").get<std::string>();
  if (j.contains("comms")) r.comms = j.at("comms").get<std::vector<std::string>>();
  return r;
}

// Pair mode: the pairs by NCCL's names and cost table cells, forced through the tuner plugin that
// NCCL_TUNER_PLUGIN names (the spec's config.tuner_plugin, set when tune chose pair mode);
// kNcclOwnChoice has no cell (-1), so the worker forces nothing for it.
void set_pairs(TrialSpec& spec, const std::vector<NcclChoice>& pairs) {
  for (const NcclChoice& pair : pairs)
    spec.config.pairs.push_back({pair.algo, pair.proto, nccl_algorithm_index(pair.algo).value_or(-1),
                                 nccl_protocol_index(pair.proto).value_or(-1)});
  spec.env["NCCL_TUNER_PLUGIN"] = spec.config.tuner_plugin;
}

// A trial under the tuner plugin with a profile: the profile in a private file of this rank for
// the worker's NCCLTUNE_PROFILE, removed with this object. `error` says why it could not be
// written (the trial then fails on this rank, and so on every rank).
struct PrivateProfile {
  std::filesystem::path path;
  std::string error;

  PrivateProfile(const std::string& text, TrialSpec& spec) {
    if (text.empty()) return;
    std::string name = (std::filesystem::temp_directory_path() / "nccltune-profile-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
      error = "cannot write the profile for the tuner plugin in " +
              std::filesystem::temp_directory_path().string() + ": " + std::strerror(errno);
      return;
    }
    path = name;
    if (!write_all(fd, text)) error = "cannot write " + name + ": " + std::strerror(errno);
    ::close(fd);
    spec.env["NCCLTUNE_PROFILE"] = name;
    spec.env["NCCL_TUNER_PLUGIN"] = spec.config.tuner_plugin;
    spec.config.count_service = true;  // what the plugin served is part of the measurement
  }
  ~PrivateProfile() {
    std::error_code ignored;  // a file the system cleans anyway
    if (!path.empty()) std::filesystem::remove(path, ignored);
  }
  PrivateProfile(const PrivateProfile&) = delete;
  PrivateProfile& operator=(const PrivateProfile&) = delete;
};

TrialResult failed_to_start(const std::string& why) {
  TrialResult result;
  result.outcome = TrialOutcome::init_error;
  result.reason = why;
  return result;
}

// Each pair's own data check: wrong elements at any of its sizes fail that pair only.
std::vector<TrialOutcome> pair_outcomes(const TrialResult& result, std::size_t pairs) {
  std::vector<TrialOutcome> outcomes(pairs, TrialOutcome::ok);
  for (std::size_t i = 0; i < result.sizes.size() && i < result.pairs.size(); ++i) {
    const SizeMeasurement& size = result.sizes[i];
    const auto pair = static_cast<std::size_t>(result.pairs[i]);
    if (pair < pairs && (size.out_of_place_wrong.value_or(0) > 0 || size.in_place_wrong.value_or(0) > 0))
      outcomes[pair] = TrialOutcome::wrong_data;
  }
  return outcomes;
}

bool only_world(const std::vector<std::string>& comms) {
  return std::all_of(comms.begin(), comms.end(), [](const std::string& c) { return c == "world"; });
}

// Runs one trial on this rank of `on`'s group (every rank of it calls it with the same request).
// The group is the job's first `count` nodes, whole (tune_job.cpp), so this rank's node and
// local rank in `layout` are its node and local rank there: the rail and node splits' layout.
TrialMeasurement measure(const CountGroup& on, const NodeLayout& layout, int count, const TrialRunner& run,
                         TrialSpec spec, const TrialRequest& request, std::vector<NcclInfoLog>* nccl_logs) {
  RankGroup& group = *on.group;
  spec.config.comms = request.comms;
  spec.config.node = layout.node;
  spec.config.nodes = count;
  spec.config.local_ranks = layout.local_size;
  const bool split = !only_world(request.comms);
  // Rail and node communicators need nodes of one size (every rank calls min and max, or none).
  const bool uneven = split && (group.min(layout.local_size) != group.max(layout.local_size) ||
                                count * layout.local_size != group.size());
  spec.env = request.env;
  spec.env.emplace(kProfileOffVariable, "1");  // a trial measures its own settings, never a served profile
  spec.config.sweep.min_bytes = request.grid.aligned_min_bytes();
  spec.config.sweep.max_bytes = request.grid.max_bytes;
  spec.config.sweep.step_factor = request.grid.factor;
  spec.config.sweep.sizes.assign(request.sizes.begin(), request.sizes.end());
  spec.config.sweep.iterations = request.iterations;
  spec.config.sweep.warmup = request.warmup;
  spec.config.collectives = request.collectives;
  if (!request.pairs.empty()) set_pairs(spec, request.pairs);
  const auto start = std::chrono::steady_clock::now();
  const PrivateProfile profile(request.plugin_profile, spec);
  // Every rank of the group runs the trial or none does (a rank that could not write its file).
  const bool unwritten = !request.plugin_profile.empty() && group.max(profile.error.empty() ? 0 : 1) > 0;
  const TrialResult result =
      uneven ? failed_to_start(
                   "rail and node communicators need every node to hold the same number of ranks "
                   "(this group's " +
                   std::to_string(group.size()) + " ranks on " + std::to_string(count) + " nodes do not)")
      : unwritten ? failed_to_start(profile.error.empty() ? "another rank could not write its profile file"
                                                          : profile.error)
      : nccl_logs ? run_with_nccl_log(group, on.logs, run, spec, *nccl_logs)
                  : run(group, spec);
  TrialMeasurement m;
  m.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.outcome = result.outcome;
  m.reason = result.reason;
  m.workers = group.size();
  m.communicators =
      result.outcome == TrialOutcome::ok
          ? result.communicators
          : 1 + static_cast<int>(std::count_if(request.comms.begin(), request.comms.end(),
                                               [](const std::string& c) { return c != "world"; }));
  m.unavailable = result.unavailable;
  m.plugin_served = result.served;
  // The plugin names the file it read: this rank's private copy, gone with the trial; the user
  // knows it as the profile being tuned.
  m.plugin_declined = result.declined_why;
  if (const std::string name = profile.path.string(); !name.empty())
    for (std::size_t at = m.plugin_declined.find(name); at != std::string::npos;
         at = m.plugin_declined.find(name, at))
      m.plugin_declined.replace(at, name.size(), "the profile being tuned");
  if (!request.pairs.empty() && result.outcome == TrialOutcome::ok)
    m.pair_outcomes = pair_outcomes(result, request.pairs.size());
  for (std::size_t i = 0; i < result.sizes.size() && i < result.ops.size(); ++i) {
    const SizeMeasurement& size = result.sizes[i];
    m.ops.push_back(result.ops[i]);
    m.sizes.push_back(size.bytes);
    m.time_us.push_back(size.out_of_place_us);
    const std::string comm = i < result.comms.size() ? result.comms[i] : "world";
    const int nranks = comm == "rail" ? count : comm == "node" ? layout.local_size : group.size();
    if (split) m.comms.push_back(comm);
    m.busbw.push_back(bus_bandwidth_gbps(result.ops[i], nranks, size.bytes, size.out_of_place_us));
  }
  return m;
}

}  // namespace

LogGroups log_groups(RankGroup& group, const NodeLayout& layout) {
  LogGroups logs;
  logs.node = group.split(layout.node);
  logs.leaders = group.split(layout.local_rank == 0 ? 0 : -1);
  return logs;
}

TrialResult run_with_nccl_log(RankGroup& group, const LogGroups& logs, const TrialRunner& run, TrialSpec spec,
                              std::vector<NcclInfoLog>& node_logs) {
  auto capture = NcclLogCapture::create();
  if (capture)
    capture->add_to(spec.env);
  else
    spdlog::warn("rank {}: NCCL's log of this trial is not read: {}", group.rank(), capture.error());
  const TrialResult result = run(group, spec);
  // "<rank>\n<text>", so that the node's first rank names each text by its rank in the group.
  const std::string mine =
      std::to_string(group.rank()) + "\n" + (capture ? capture->read_all() : std::string());
  const std::vector<std::string> texts = logs.node->gather(mine);
  if (!logs.leaders) return result;
  std::vector<std::pair<std::string, std::string>> sources;
  for (const std::string& text : texts) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string::npos) continue;  // a rank that sent nothing
    sources.emplace_back("rank " + text.substr(0, newline), text.substr(newline + 1));
  }
  // One summary per communicator the node's ranks made: the world's and each split's stay apart.
  node_logs.clear();
  for (const std::string& summaries :
       logs.leaders->gather(node_log_summaries_to_json(node_logs_by_communicator(sources)))) {
    if (summaries.empty()) continue;  // a node that sent nothing
    Result<std::vector<NcclInfoLog>> parsed = node_log_summaries_from_json(summaries);
    if (parsed) node_logs.insert(node_logs.end(), parsed->begin(), parsed->end());
  }
  return result;
}

TrialMeasurement lead_trial(const JobRanks& ranks, const CountGroups& groups, int count,
                            const TrialRequest& request, std::vector<NcclInfoLog>* nccl_logs) {
  ranks.group.broadcast(json{{"cmd", "trial"},
                             {"count", count},
                             {"request", request_to_json(request)},
                             {"nccl_log", nccl_logs != nullptr}}
                            .dump(),
                        0);
  const CountGroup& on = groups.at(count);
  return measure(on, ranks.layout, count, ranks.run, on.spec, request, nccl_logs);
}

int follow(const JobRanks& ranks, const CountGroups& groups) {
  while (true) {
    const json message = json::parse(ranks.group.broadcast(std::string(), 0));
    if (message.value("cmd", "") != "trial") return message.value("exit", 0);
    const auto on = groups.find(message.value("count", 0));
    if (on == groups.end() || !on->second.group) continue;  // a trial of a count this rank is not in
    std::vector<NcclInfoLog> nccl_logs;
    measure(on->second, ranks.layout, on->first, ranks.run, on->second.spec,
            request_from_json(message.at("request")),
            message.value("nccl_log", false) ? &nccl_logs : nullptr);
  }
}

int stop_followers(const JobRanks& ranks, int exit_code) {
  ranks.group.broadcast(json{{"cmd", "stop"}, {"exit", exit_code}}.dump(), 0);
  return exit_code;
}

}  // namespace nccltune
