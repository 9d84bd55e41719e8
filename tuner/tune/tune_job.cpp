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
#include "collectives/library_versions.h"
#include "nccl_log/nccl_account.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "nccl_log/nccl_observation.h"
#include "profile/nccl_names.h"
#include "profile/store_permissions.h"
#include "report/profile_summary.h"
#include "search/default_search_space.h"
#include "search/journal_replay.h"
#include "tune/node_gather.h"
#include "tune_profile/profile_builder.h"

namespace nccltune {
namespace {

// The probe, the first baseline and the first round of the final confirmation run with NCCL's
// log: they show the defaults' network and choices on both grids, and the winner's.
bool captures_nccl_log(const TrialRequest& r) {
  return (r.phase == TrialPhase::baseline || r.phase == TrialPhase::confirm) && r.repeat == 0;
}

TrialSpec base_spec(const TuneOptions& o, const TuneRanks& ranks) {
  TrialSpec spec;
  spec.config.rank = ranks.group.rank();
  spec.config.nranks = ranks.group.size();
  spec.config.device = ranks.layout.local_rank;
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

Result<SearchSpace> load_space(const TuneOptions& o) {
  if (!o.space_file.empty()) {
    const Result<std::string> text = read_text_file(o.space_file, kMaxConfigBytes);
    if (!text) return Error{text.error()};
    return parse_search_space(*text, o.space_file);
  }
  return parse_search_space(default_search_space_yaml(), "configs/search-space.yaml (built in)");
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

// The journal at --journal (default <out>/journal.jsonl), and with --resume the trials it holds
// for this shape and NCCL. The journal usually lives in the store: its directories get the
// store's modes.
Result<Journal> open_journal(const TuneOptions& o, const JournalScope& scope,
                             std::map<std::string, JournalEntry>& resumed, TuneConsole& console) {
  const std::string path =
      o.journal.empty() ? (std::filesystem::path(o.out_dir) / "journal.jsonl").string() : o.journal;
  if (const Status made = make_store_directories(std::filesystem::path(path).parent_path()); !made)
    return Error{made.error()};
  if (o.resume && std::filesystem::exists(path)) {
    auto entries = Journal::read(path);
    if (!entries) return Error{entries.error()};
    resumed = resumable_trials(*entries, scope);
    console.message(fmt::format("nccltune tune: resuming: {} finished trials in {}", resumed.size(), path));
  }
  return Journal::open(path);
}

// Writes the profile, checks that env will take it and prints `show`'s summary of it, with what
// a profile cannot say: the trials the journal answered, where it went. 0, or 1 when it could not
// be written.
int write_and_summarize(const TuneOptions& o, const Profile& profile, const StrategyResult& result,
                        TuneConsole& console) {
  std::filesystem::path written;
  if (auto saved = write_profile(o.out_dir, profile, &written); !saved) {
    console.message("nccltune tune: " + saved.error());
    return 1;
  }
  warn_if_env_refuses(console, o.out_dir, written);
  console.message("\n" + render_profile_summary(profile, written.string()));
  console.message(fmt::format("{} trials ({} from the journal), {} failed", result.trials,
                              result.cached_trials, result.failed_trials));
  console.message(fmt::format("profile: {} ({} in {})", written.string(),
                              result.keep_defaults ? "keep defaults" : describe_env(result.env),
                              format_duration(profile.provenance.duration_s)));
  return 0;
}

// Rank 0: the strategy over every rank's trials, journaled, then the profile.
int lead(const TuneRanks& ranks, const TuneOptions& o, const TrialSpec& spec, const ClusterShape& shape,
         const SearchSpace& space, const std::map<std::string, LineRate>& peaks, NcclAccount& account,
         TuneConsole& console) {
  const auto started = std::chrono::steady_clock::now();
  const JournalScope scope{shape.node_type_key, shape.node.nccl_version};
  std::map<std::string, JournalEntry> resumed;
  auto journal = open_journal(o, scope, resumed, console);
  if (!journal) {
    console.message("nccltune tune: " + journal.error());
    return stop_followers(ranks, 2);
  }
  // A resumed run measures again the few trials that read NCCL's log: the journal keeps times,
  // not what NCCL said, and the strategy and the profile need that.
  const TrialExecutor measure = [&](const TrialRequest& request) {
    const bool nccl_log = captures_nccl_log(request);
    std::vector<std::string> nccl_logs;
    TrialMeasurement m = lead_trial(ranks, spec, request, nccl_log ? &nccl_logs : nullptr);
    // NCCL's own choices tell the strategy what the defaults use at the largest size
    // (shippable_env.h): a NCCL_ALGO or NCCL_PROTO list that keeps it may ship.
    if (nccl_log)
      m.nccl_choices =
          logged_choices_at(account.add(request.env, nccl_logs, to_string(request.phase)), m.ops, m.sizes);
    return m;
  };
  const TrialExecutor execute =
      journaled_executor(*journal, scope, std::move(resumed), measure, captures_nccl_log,
                         [](const std::string& why) { spdlog::warn("journal: {}", why); });
  const ProgressCallback progress = [&](const StrategyProgress& p, const TrialRequest& r,
                                        const TrialMeasurement& m) { console.trial(p, r, m); };
  const StrategyResult result = run_strategy(space, o.strategy, execute, progress);
  console.finish_line();
  if (!result.error.empty()) {
    console.message("nccltune tune: " + result.error);
    return stop_followers(ranks, 1);
  }
  RunFacts run;
  run.peaks = peaks;
  run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  run.date = rfc3339_utc();
  Profile profile = build_profile(shape, result, o.strategy, run);
  profile.provenance.nccl_observed = nccl_observed(account, profile);
  return stop_followers(ranks, write_and_summarize(o, profile, result, console));
}

}  // namespace

int run_tune_job(RankGroup& group, const NodeLayout& layout, const TuneOptions& o, const TrialRunner& run) {
  const TuneRanks ranks{group, layout, run};
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

  // A tiny probe trial: is the stack usable, and what GPU and NCCL does it see?
  const TrialSpec spec = base_spec(o, ranks);
  TrialSpec probe_spec = spec;
  probe_spec.config.sweep.min_bytes = probe_spec.config.sweep.max_bytes = 1024;
  probe_spec.config.sweep.iterations = 1;
  probe_spec.config.sweep.warmup = 0;
  NcclAccount account;
  std::vector<std::string> probe_logs;
  const TrialResult probe = run_with_nccl_log(ranks, probe_spec, probe_logs);
  account.add({}, probe_logs, "probe");
  if (probe.outcome != TrialOutcome::ok) {
    if (leader) print_log_verdicts(console, account);
    return fail_all(
        "NCCL's defaults cannot run here (" + std::string(to_string(probe.outcome)) + "): " + probe.reason,
        1);
  }

  // Every node's type and peaks, then the cluster's shape and the knobs that apply to it.
  std::vector<std::string> ops = o.strategy.collectives;
  ops.insert(ops.end(), o.strategy.guards.begin(), o.strategy.guards.end());
  GatheredNodes nodes =
      gather_nodes(ranks, o.from, ops, {probe.device.name, probe.device.sm},
                   nccl_version_string(probe.nccl_version), cuda_driver_version_string(probe.cuda_driver));
  account.node = std::move(nodes.own);
  if (!nodes.error.empty()) return fail_all(nodes.error, 2);
  auto shape = cluster_shape(nodes.types, layout.hosts, o.allow_mixed);
  if (!shape) return fail_all(shape.error(), 2);
  const SearchSpace pruned = prune(*space, shape_facts(*shape, probe.nccl_version));
  if (!leader) return follow(ranks, spec);

  console.message(fmt::format("nccltune tune: {} node(s) x {} GPU(s) of {}{}", shape->nodes, shape->node.gpus,
                              shape->node_type_key, layout.emulated ? " (emulated nodes)" : ""));
  std::string knobs;
  for (const auto& k : pruned.knobs) knobs += (knobs.empty() ? "" : " ") + k.name;
  console.message("nccltune tune: knobs: " + (knobs.empty() ? std::string("none") : knobs));
  TuneOptions options = o;
  options.strategy.scoped_lists = probe.nccl_version >= kScopedListsNcclVersion;
  return lead(ranks, options, spec, *shape, pruned, nodes.peaks, account, console);
}

}  // namespace nccltune
