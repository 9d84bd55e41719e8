#include "tune/tune_job.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "base/atomic_file.h"
#include "base/duration.h"
#include "base/utc_time.h"
#include "collectives/bus_bandwidth.h"
#include "collectives/library_versions.h"
#include "collectives/nccl_library.h"
#include "profile/nccl_names.h"
#include "profile/profile.h"
#include "profile/size_ranges.h"
#include "profile/store_permissions.h"
#include "search/default_search_space.h"
#include "topology/peak_model.h"
#include "topology/sources/topology_reader.h"
#include "tune/cluster_shape.h"
#include "tune/journal.h"
#include "tune/nccl_log_capture.h"
#include "tune/nccl_observation.h"

namespace nccltune {
namespace {

using nlohmann::json;

// The same TrialSpec on every rank, but for the rank-specific parts.
// Everything one rank of the job needs to run trials.
struct Job {
  RankGroup& group;
  const NodeLayout& layout;
  const TrialRunner& run;
};

// NCCL's own account of the trials that show it, on rank 0: every rank's log text of those
// trials, by the env they ran under (the defaults' is the empty env), and the topology of rank
// 0's node that explain's verdicts compare it with.
struct NcclAccount {
  std::map<Env, NcclInfoLogReader> logs;
  std::optional<NodeTopology> node;

  // Adds one trial's logs; returns what they say of that trial alone.
  NcclInfoLog add(const Env& env, const std::vector<std::string>& rank_logs, std::string_view trial) {
    NcclInfoLogReader& reader = logs[env];
    NcclInfoLogReader this_trial;
    for (std::size_t rank = 0; rank < rank_logs.size(); ++rank) {
      const std::string source = fmt::format("{} rank {}", trial, rank);
      reader.add(rank_logs[rank], source);
      this_trial.add(rank_logs[rank], source);
    }
    return this_trial.result();
  }
};

// The probe, the first baseline and the first round of the final confirmation run with NCCL's
// log: they show the defaults' network and choices on both grids, and the winner's.
bool captures_nccl_log(const TrialRequest& r) {
  return (r.phase == TrialPhase::baseline || r.phase == TrialPhase::confirm) && r.repeat == 0;
}

// Runs `spec` on every rank with NCCL's log in a private directory of each rank; rank 0 gets
// every rank's text (a rank whose directory could not be made sends why).
TrialResult run_with_nccl_log(const Job& job, TrialSpec spec, std::vector<std::string>& rank_logs) {
  auto capture = NcclLogCapture::create();
  if (capture) capture->add_to(spec.env);
  const TrialResult result = job.run(job.group, spec);
  rank_logs =
      job.group.gather(capture ? capture->read_all()
                               : fmt::format("# nccltune: rank {}: {}\n", job.group.rank(), capture.error()));
  return result;
}

TrialSpec base_spec(const TuneOptions& o, const Job& job) {
  TrialSpec spec;
  spec.config.rank = job.group.rank();
  spec.config.nranks = job.group.size();
  spec.config.device = job.layout.local_rank;
  const LocalLibraries libraries = choose_libraries(o.cuda_lib, o.nccl_lib);
  spec.config.cuda_lib = libraries.cuda_lib;
  spec.config.nccl_lib = libraries.nccl_lib;
  spec.config.sweep.check = true;
  spec.config.sweep.in_place = false;
  spec.config.sweep.max_bytes_per_size = o.max_bytes_per_size;
  spec.init_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.init_timeout_s * 1000));
  spec.size_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.size_timeout_s * 1000));
  return spec;
}

json request_to_json(const TrialRequest& r) {
  return {{"env", r.env},
          {"phase", to_string(r.phase)},
          {"min", r.grid.min_bytes},
          {"max", r.grid.max_bytes},
          {"factor", r.grid.factor},
          {"iterations", r.iterations},
          {"warmup", r.warmup},
          {"repeat", r.repeat},
          {"collectives", r.collectives}};
}

TrialRequest request_from_json(const json& j) {
  TrialRequest r;
  r.env = j.at("env").get<Env>();
  r.phase = parse_trial_phase(j.at("phase").get<std::string>()).value_or(TrialPhase::screen);
  r.grid = {j.at("min").get<std::uint64_t>(), j.at("max").get<std::uint64_t>(), j.at("factor").get<double>()};
  r.iterations = j.at("iterations").get<int>();
  r.warmup = j.at("warmup").get<int>();
  r.repeat = j.at("repeat").get<int>();
  r.collectives = j.at("collectives").get<std::vector<std::string>>();
  return r;
}

// Runs one trial on this rank (every rank calls it with the same request).
// With `nccl_logs`, NCCL's log of every rank comes back there (on rank 0).
TrialMeasurement measure(const Job& job, TrialSpec spec, const TrialRequest& request,
                         std::vector<std::string>* nccl_logs = nullptr) {
  spec.env = request.env;
  spec.config.sweep.min_bytes = request.grid.aligned_min_bytes();
  spec.config.sweep.max_bytes = request.grid.max_bytes;
  spec.config.sweep.step_factor = request.grid.factor;
  spec.config.sweep.iterations = request.iterations;
  spec.config.sweep.warmup = request.warmup;
  spec.config.collectives = request.collectives;
  const auto start = std::chrono::steady_clock::now();
  const TrialResult result = nccl_logs ? run_with_nccl_log(job, spec, *nccl_logs) : job.run(job.group, spec);
  TrialMeasurement m;
  m.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.outcome = result.outcome;
  m.reason = result.reason;
  for (std::size_t i = 0; i < result.sizes.size() && i < result.ops.size(); ++i) {
    const SizeMeasurement& size = result.sizes[i];
    m.ops.push_back(result.ops[i]);
    m.sizes.push_back(size.bytes);
    m.time_us.push_back(size.out_of_place_us);
    m.busbw.push_back(bus_bandwidth_gbps(result.ops[i], job.group.size(), size.bytes, size.out_of_place_us));
  }
  return m;
}

// Ranks other than 0 follow rank 0's trials until it says stop.
int follow(const Job& job, const TrialSpec& spec) {
  while (true) {
    const json message = json::parse(job.group.broadcast(std::string(), 0));
    if (message.value("cmd", "") != "trial") return message.value("exit", 0);
    std::vector<std::string> nccl_logs;
    measure(job, spec, request_from_json(message.at("request")),
            message.value("nccl_log", false) ? &nccl_logs : nullptr);
  }
}

int stop_followers(const Job& job, int exit_code) {
  job.group.broadcast(json{{"cmd", "stop"}, {"exit", exit_code}}.dump(), 0);
  return exit_code;
}

// `--from A,B,...`: node i replays entry i (modulo the count), so one machine can emulate a
// cluster of unlike nodes; a single entry serves every node.
std::string topology_source_for_node(const std::string& from, int node) {
  std::vector<std::string> entries;
  std::string::size_type start = 0;
  while (start <= from.size()) {
    const auto comma = from.find(',', start);
    entries.push_back(from.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return entries[static_cast<size_t>(node) % entries.size()];
}

// Each node's first rank reads the node's topology; its NodeType goes to every rank, and so does
// the hardware peak of each measured collective on this job's layout as that node sees it:
// `peaks` gets the lowest (unknown when any node's is), since the slowest node bounds every
// collective. `own` gets the topology this rank read, if it read one.
std::vector<NodeType> gather_node_types(const Job& job, const TuneOptions& o, const TrialResult& probe,
                                        std::string& error, std::map<std::string, LineRate>& peaks,
                                        std::optional<NodeTopology>& own) {
  std::vector<std::string> ops = o.strategy.collectives;
  ops.insert(ops.end(), o.strategy.guards.begin(), o.strategy.guards.end());
  std::string mine;
  const NodeLayout& layout = job.layout;
  if (layout.local_rank == 0) {
    NodeTopology topology;
    auto source = parse_topology_source(topology_source_for_node(o.from, layout.node));
    if (source) {
      auto read = read_node_topology(*source, {});
      if (read) {
        topology = std::move(read.value());
        for (const std::string& op : ops)
          peaks[op] = collective_peak(node_peak(topology), op, layout.nodes, layout.local_size);
        own = topology;
      } else {
        error = read.error();
      }
    } else {
      error = source.error();
    }
    // The live machine only: a snapshot (--from) or emulated nodes stand for other GPUs.
    if (const auto problem =
            rank_per_gpu_problem(layout.hosts.at(static_cast<std::size_t>(layout.node)),
                                 static_cast<int>(topology.gpus.size()), layout.local_size, layout.nodes);
        problem && error.empty() && o.from.empty() && !layout.emulated)
      error = *problem;
    const NodeType type =
        node_type(topology, {probe.device.name, probe.device.sm}, layout.local_size,
                  nccl_version_string(probe.nccl_version), cuda_driver_version_string(probe.cuda_driver));
    json j = {{"gpu", type.gpu},
              {"gpus", type.gpus},
              {"sm", type.gpu_sm},
              {"nvlinks", type.nvlinks},
              {"nic", type.nic},
              {"nic_ethernet", type.nic_ethernet},
              {"nic_rate", type.nic_rate_gbps},
              {"affinity", type.gpu_nic_affinity},
              {"nccl", type.nccl_version},
              {"cuda", type.cuda_driver},
              {"error", error}};
    j["nvswitch"] = type.nvswitch ? json(*type.nvswitch) : json(nullptr);
    j["nics"] = type.nics ? json(*type.nics) : json(nullptr);
    json& peak_json = j["peaks"] = json::object();
    for (const std::string& op : ops) {
      const LineRate& peak = peaks[op];
      peak_json[op] = {
          {"gbps", peak.gbps ? json(*peak.gbps) : json(nullptr)},
          {"what", peak.gbps ? peak.bottleneck.value_or("") : peak.unknown_reason.value_or("not known")}};
    }
    mine = j.dump(-1, ' ', false, json::error_handler_t::replace);  // an error may quote a path
  }
  std::vector<NodeType> types;
  std::map<std::string, LineRate> lowest;
  for (const auto& text : job.group.gather(mine)) {
    if (text.empty()) continue;
    const json j = json::parse(text);
    for (const auto& [op, peak] : j.at("peaks").items()) {
      LineRate node;
      if (peak.at("gbps").is_null())
        node.unknown_reason = peak.at("what").get<std::string>();
      else
        node = {peak.at("gbps").get<double>(), peak.at("what").get<std::string>(), {}};
      const auto seen = lowest.find(op);
      if (seen == lowest.end() || (seen->second.gbps && (!node.gbps || *node.gbps < *seen->second.gbps)))
        lowest[op] = node;
    }
    if (!j.at("error").get<std::string>().empty() && error.empty()) error = j.at("error").get<std::string>();
    NodeType t;
    t.gpu = j.at("gpu");
    t.gpus = j.at("gpus");
    t.gpu_sm = j.at("sm");
    t.nvlinks = j.at("nvlinks");
    t.nic = j.at("nic");
    t.nic_ethernet = j.at("nic_ethernet");
    t.nic_rate_gbps = j.at("nic_rate");
    t.gpu_nic_affinity = j.at("affinity");
    t.nccl_version = j.at("nccl");
    t.cuda_driver = j.at("cuda");
    if (!j.at("nvswitch").is_null()) t.nvswitch = j.at("nvswitch").get<bool>();
    if (!j.at("nics").is_null()) t.nics = j.at("nics").get<int>();
    types.push_back(t);
  }
  if (!lowest.empty()) peaks = lowest;
  return types;
}

Result<SearchSpace> load_space(const TuneOptions& o) {
  if (!o.space_file.empty()) {
    const Result<std::string> text = read_text_file(o.space_file, kMaxConfigBytes);
    if (!text) return Error{text.error()};
    return parse_search_space(*text, o.space_file);
  }
  return parse_search_space(default_search_space_yaml(), "configs/search-space.yaml (built in)");
}

// What NCCL's log said under the defaults and under the env the profile ships, explain's verdicts
// on the latter, and where NCCL's own choice there is not per_size's.
NcclObserved nccl_observed(const NcclAccount& account, const Profile& profile) {
  NcclObserved observed;
  std::optional<NcclInfoLog> jobs_log;
  // A log without a line of NCCL's (NCCL printed nothing, or the trials came from the journal)
  // records nothing.
  const auto read = [&](const Env& env) -> std::optional<NcclObservation> {
    const auto it = account.logs.find(env);
    if (it == account.logs.end()) return std::nullopt;
    NcclInfoLog log = it->second.result();
    if (log.nccl_lines == 0) return std::nullopt;
    jobs_log = std::move(log);
    return observation_from_log(*jobs_log);
  };
  observed.defaults = read(Env{});
  if (!profile.env.empty()) observed.shipped = read(profile.env);
  if (jobs_log) {
    // Not the "forced settings" ones: the shipped env's NCCL_ALGO / NCCL_PROTO are tune's own choice.
    std::vector<LogVerdict> verdicts = explain_nccl_log(*jobs_log, account.node ? &*account.node : nullptr);
    std::erase_if(verdicts, [](const LogVerdict& v) { return v.check == "env"; });
    observed.verdicts = observed_verdicts(verdicts);
    for (const auto& [op, collective] : profile.collectives) {
      const std::optional<std::string_view> logged = nccl_log_op_name(op);
      if (!logged || collective.guard) continue;
      for (ChoiceContradiction& c : choice_contradictions(*jobs_observation(observed), *logged,
                                                          collective.per_size, collective.measured))
        observed.contradictions.push_back(std::move(c));
    }
  }
  return observed;
}

// One collective's part of the profile: its points of the confirmation, scored on their own.
CollectiveProfile collective_profile(const StrategyResult& whole, const std::string& op, const TuneOptions& o,
                                     const LineRate& peak) {
  const StrategyResult r = collective_result(whole, op);
  CollectiveProfile c;
  c.guard = std::find(o.strategy.guards.begin(), o.strategy.guards.end(), op) != o.strategy.guards.end();
  if (const auto it = r.per_size.find(op); it != r.per_size.end()) {
    std::vector<std::uint64_t> sizes;
    for (const auto& choice : it->second) sizes.push_back(choice.min_bytes);
    c.per_size = size_ranges(sizes, it->second);
  }
  if (!r.sizes.empty()) c.measured = {r.sizes.front(), r.sizes.back()};
  c.results.sizes = r.sizes;
  c.results.baseline = r.baseline_busbw;
  c.results.tuned = r.tuned_busbw;
  const Score s = score(o.strategy.objective, std::vector<std::size_t>(r.sizes.begin(), r.sizes.end()),
                        r.baseline_busbw, r.tuned_busbw, o.strategy.tolerance);
  c.results.speedup_geomean = s.value;
  c.results.worst_size_ratio = s.worst_ratio;
  c.results.peak_busbw_gbps = peak.gbps;
  c.results.peak_bottleneck =
      peak.gbps ? peak.bottleneck.value_or("") : "unknown: " + peak.unknown_reason.value_or("");
  return c;
}

Profile make_profile(const ClusterShape& shape, const StrategyResult& r, const TuneOptions& o,
                     const std::map<std::string, LineRate>& peaks, double duration_s,
                     const NcclAccount& account) {
  Profile p;
  p.shape.node_type_key = shape.node_type_key;
  p.shape.nodes = shape.nodes;
  p.shape.gpus_per_node = shape.node.gpus;
  p.shape.ranks = shape.nodes * shape.node.gpus;
  p.shape.gpu = shape.node.gpu;
  p.shape.nvswitch = shape.node.nvswitch.value_or(false);
  p.shape.nics_per_node = shape.node.nics.value_or(0);
  p.shape.nic = shape.node.nic;
  p.shape.gpu_nic_affinity = shape.node.gpu_nic_affinity;
  p.shape.nccl_version = shape.node.nccl_version;
  p.shape.cuda_driver = shape.node.cuda_driver;
  p.env = r.env;
  p.keep_defaults = r.keep_defaults;
  for (const std::string& op : result_collectives(r)) {
    const auto peak = peaks.find(op);
    p.collectives[op] = collective_profile(r, op, o, peak == peaks.end() ? LineRate{} : peak->second);
  }
  p.provenance.tool = std::string("nccltune ") + NCCLTUNE_VERSION;
  p.provenance.date = rfc3339_utc();
  p.provenance.trials = r.trials;
  p.provenance.failed_trials = r.failed_trials;
  p.provenance.duration_s = duration_s;
  p.provenance.objective = std::string(to_string(o.strategy.objective));
  p.provenance.hosts = shape.nodes;
  p.provenance.noise_floor = r.noise;
  p.provenance.confirmation = r.confirmation;
  p.failed = r.failed;
  p.notes = r.notes;
  p.provenance.nccl_observed = nccl_observed(account, p);
  return p;
}

// The trust check `nccltune env` runs (store_permissions.h), on what was just written: a store
// that env refuses gives jobs no variables at all, silently (env fails open). Root's prologs and
// other users' jobs trust only what root owns, so a store owned by another user gets a warning.
void warn_if_env_refuses(TuneConsole& console, const std::string& out_dir,
                         const std::filesystem::path& written) {
  const uid_t self = ::geteuid();
  if (const Result<TrustedFile> mine = read_trusted_file(out_dir, written, self, kMaxProfileBytes); !mine) {
    console.message("nccltune tune: warning: nccltune env will refuse this profile: " + mine.error());
    return;
  }
  if (self == 0) return;
  if (const Result<TrustedFile> others = read_trusted_file(out_dir, written, 0, kMaxProfileBytes); !others)
    console.message(
        "nccltune tune: warning: only jobs of this user will use this profile (root's prologs and other "
        "users' jobs refuse it: " +
        others.error() + "); give the store to root (chown -R root)");
}

// On a failed probe: what NCCL's log says of why (nothing when NCCL printed nothing).
void print_log_verdicts(TuneConsole& console, const NcclAccount& account) {
  const auto it = account.logs.find(Env{});
  if (it == account.logs.end()) return;
  const NcclInfoLog log = it->second.result();
  if (log.nccl_lines == 0) return;
  for (const LogVerdict& v : explain_nccl_log(log, nullptr))
    if (v.level != LogVerdictLevel::info)
      console.message(
          fmt::format("nccltune tune: NCCL's log: {} {}: {}", to_string(v.level), v.check, v.message));
}

int lead(const Job& job, const TuneOptions& o, const TrialSpec& spec, const ClusterShape& shape,
         const SearchSpace& space, const std::map<std::string, LineRate>& peaks, NcclAccount& account,
         TuneConsole& console) {
  const auto started = std::chrono::steady_clock::now();
  const std::string journal_path =
      o.journal.empty() ? (std::filesystem::path(o.out_dir) / "journal.jsonl").string() : o.journal;
  // The journal usually lives in the store: its directories get the store's modes.
  if (const Status made = make_store_directories(std::filesystem::path(journal_path).parent_path()); !made) {
    console.message("nccltune tune: " + made.error());
    return stop_followers(job, 2);
  }
  std::map<std::string, JournalEntry> cache;
  if (o.resume && std::filesystem::exists(journal_path)) {
    auto entries = Journal::read(journal_path);
    if (!entries) {
      console.message("nccltune tune: " + entries.error());
      return stop_followers(job, 2);
    }
    for (const auto& e : *entries)
      if (e.node_type_key == shape.node_type_key && e.nccl_version == shape.node.nccl_version)
        cache[journal_key(e)] = e;
    console.message(
        fmt::format("nccltune tune: resuming: {} finished trials in {}", cache.size(), journal_path));
  }
  auto journal = Journal::open(journal_path);
  if (!journal) {
    console.message("nccltune tune: " + journal.error());
    return stop_followers(job, 2);
  }

  auto entry_for = [&](const TrialRequest& r) {
    JournalEntry e;
    e.node_type_key = shape.node_type_key;
    e.nccl_version = shape.node.nccl_version;
    e.env = r.env;
    e.phase = r.phase;
    e.iterations = r.iterations;
    e.warmup = r.warmup;
    e.sizes = grid_sizes(r.grid);
    e.collectives = r.collectives;
    e.repeat = r.repeat;
    return e;
  };
  TrialExecutor execute = [&](const TrialRequest& request) {
    JournalEntry e = entry_for(request);
    const bool nccl_log = captures_nccl_log(request);
    // A resumed run measures again the few trials that read NCCL's log: the journal keeps times,
    // not what NCCL said, and the strategy and the profile need that.
    if (auto it = cache.find(journal_key(e)); !nccl_log && it != cache.end()) {
      TrialMeasurement m;
      m.cached = true;
      m.outcome = it->second.outcome;
      m.reason = it->second.reason;
      m.ops = journal_points(it->second, m.sizes);
      m.time_us = it->second.time_us;
      m.busbw = it->second.busbw;
      m.duration_s = it->second.duration_s;
      return m;
    }
    job.group.broadcast(
        json{{"cmd", "trial"}, {"request", request_to_json(request)}, {"nccl_log", nccl_log}}.dump(), 0);
    std::vector<std::string> nccl_logs;
    TrialMeasurement m = measure(job, spec, request, nccl_log ? &nccl_logs : nullptr);
    // NCCL's own choices tell the strategy what the defaults use at the largest size
    // (shippable_env.h): a NCCL_ALGO or NCCL_PROTO list that keeps it may ship.
    if (nccl_log)
      m.nccl_choices =
          logged_choices_at(account.add(request.env, nccl_logs, to_string(request.phase)), m.ops, m.sizes);
    e.outcome = m.outcome;
    e.reason = m.reason;
    e.point_bytes = m.sizes;
    e.time_us = m.time_us;
    e.busbw = m.busbw;
    e.duration_s = m.duration_s;
    if (auto appended = journal->append(e); !appended) spdlog::warn("journal: {}", appended.error());
    return m;
  };
  ProgressCallback progress = [&](const StrategyProgress& p, const TrialRequest& r,
                                  const TrialMeasurement& m) { console.trial(p, r, m); };
  const StrategyResult result = run_strategy(space, o.strategy, execute, progress);
  console.finish_line();
  if (!result.error.empty()) {
    console.message("nccltune tune: " + result.error);
    return stop_followers(job, 1);
  }
  const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const Profile profile = make_profile(shape, result, o, peaks, duration, account);
  std::filesystem::path written;
  if (auto saved = write_profile(o.out_dir, profile, &written); !saved) {
    console.message("nccltune tune: " + saved.error());
    return stop_followers(job, 1);
  }
  warn_if_env_refuses(console, o.out_dir, written);
  console.message("\n" + render_tune_summary(result, profile.provenance.nccl_observed));
  for (const auto& [op, peak] : peaks) console.message(render_peak_line(result, op, peak));
  console.message(fmt::format("profile: {} ({} in {})", written.string(),
                              result.keep_defaults ? "keep defaults" : describe_env(result.env),
                              format_duration(duration)));
  return stop_followers(job, 0);
}

}  // namespace

int run_tune_job(RankGroup& group, const NodeLayout& layout, const TuneOptions& o, const TrialRunner& run) {
  const Job job{group, layout, run};
  TuneConsole console(stdout, o.progress);
  const bool leader = group.rank() == 0;
  if (group.size() < 2) {
    std::fprintf(stderr,
                 "nccltune tune: tune needs at least 2 ranks: one per GPU (mpirun -np N, srun --mpi=pmix)\n");
    return 2;
  }
  auto fail_all = [&](const std::string& message, int code) {
    if (leader) console.message("nccltune tune: " + message);
    return code;
  };
  auto space = load_space(o);  // every rank parses it: an error is the same everywhere
  if (!space) return fail_all(space.error(), 2);

  TrialSpec spec = base_spec(o, job);
  // A tiny probe trial: is the stack usable, and what GPU and NCCL does it see?
  TrialSpec probe_spec = spec;
  probe_spec.config.sweep.min_bytes = probe_spec.config.sweep.max_bytes = 1024;
  probe_spec.config.sweep.iterations = 1;
  probe_spec.config.sweep.warmup = 0;
  NcclAccount account;
  std::vector<std::string> probe_logs;
  const TrialResult probe = run_with_nccl_log(job, probe_spec, probe_logs);
  account.add({}, probe_logs, "probe");
  if (probe.outcome != TrialOutcome::ok) {
    if (leader) print_log_verdicts(console, account);
    return fail_all(
        "NCCL's defaults cannot run here (" + std::string(to_string(probe.outcome)) + "): " + probe.reason,
        1);
  }

  std::string topology_error;
  std::map<std::string, LineRate> peaks;
  const auto types = gather_node_types(job, o, probe, topology_error, peaks, account.node);
  if (!topology_error.empty()) return fail_all(topology_error, 2);
  auto shape = cluster_shape(types, layout.hosts, o.allow_mixed);
  if (!shape) return fail_all(shape.error(), 2);
  const SearchSpace pruned = prune(*space, shape_facts(*shape, probe.nccl_version));
  if (leader) {
    console.message(fmt::format("nccltune tune: {} node(s) x {} GPU(s) of {}{}", shape->nodes,
                                shape->node.gpus, shape->node_type_key,
                                layout.emulated ? " (emulated nodes)" : ""));
    std::string knobs;
    for (const auto& k : pruned.knobs) knobs += (knobs.empty() ? "" : " ") + k.name;
    console.message("nccltune tune: knobs: " + (knobs.empty() ? std::string("none") : knobs));
    TuneOptions options = o;
    options.strategy.scoped_lists = probe.nccl_version >= kScopedListsNcclVersion;
    return lead(job, options, spec, *shape, pruned, peaks, account, console);
  }
  return follow(job, spec);
}

}  // namespace nccltune
