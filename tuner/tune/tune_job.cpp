#include "tune/tune_job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "base/atomic_file.h"
#include "base/duration.h"
#include "base/utc_time.h"
#include "collectives/library_versions.h"
#include "collectives/worker_process.h"
#include "mpi_runtime/node_gather.h"
#include "nccl_log/nccl_account.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "nccl_log/nccl_observation.h"
#include "profile/nccl_names.h"
#include "profile/store_permissions.h"
#include "report/profile_summary.h"
#include "search/default_search_space.h"
#include "search/journal_replay.h"
#include "search/node_count_search.h"
#include "search/objective.h"
#include "search/trial_counts.h"
#include "topology/sources/nccl_tuner_probe.h"
#include "tune/default_tuner_words.h"
#include "tune/plugin_rounds.h"
#include "tune_profile/nccl_node_layout.h"
#include "tune_profile/node_count_plan.h"
#include "tune_profile/profile_builder.h"
#include "tune_profile/withheld_settings.h"

namespace nccltune {
namespace {

// The probe, the first baseline and the first round of the final confirmation run with NCCL's
// log: they show the defaults' network and choices on both grids, and the winner's.
bool captures_nccl_log(const TrialRequest& r) {
  return (r.phase == TrialPhase::baseline || r.phase == TrialPhase::confirm) && r.repeat == 0;
}

// How NCCL counted the world's nodes, from its logs (the comm line's nNodes and MNNVL; one summary
// per node): one node per host, or with MNNVL one per NVLink domain.
Result<NcclNodeLayout> logged_layout(int hosts, int ranks_per_host, const std::vector<NcclInfoLog>& logs) {
  std::optional<int> nodes;
  std::optional<bool> mnnvl;
  for (const NcclInfoLog& log : logs) {
    if (log.nodes) nodes = std::max(nodes.value_or(0), *log.nodes);
    if (log.mnnvl) mnnvl = mnnvl.value_or(false) || *log.mnnvl;
  }
  return nccl_node_layout(hosts, ranks_per_host, nodes, mnnvl);
}

// "2 node(s)" as the summary lines have always said it; "4 hosts (1 NVLink domain)" with MNNVL.
std::string count_words(const NcclNodeLayout& nccl) {
  if (!nccl.mnnvl) return fmt::format("{} node(s)", nccl.hosts);
  return fmt::format("{} hosts ({} NVLink domain{})", nccl.hosts, nccl.nodes, nccl.nodes == 1 ? "" : "s");
}

// The layout a count's own defaults' log shows, where it shows one; else `expected`.
NcclNodeLayout refined_layout(const NcclNodeLayout& expected, const NcclAccount& account) {
  const auto world = account.logs.find(Env{});
  if (world == account.logs.end()) return expected;
  const Result<NcclNodeLayout> logged =
      logged_layout(expected.hosts, expected.ranks_per_host, {world->second.result()});
  if (!logged) {
    spdlog::warn("{}: the profile keeps {}", logged.error(), describe_profile_shape(nccl_counts(expected)));
    return expected;
  }
  return *logged;
}

// What every trial of one rank of `group` runs, but the request's part.
TrialSpec base_spec(const TuneOptions& o, const RankGroup& group, const NodeLayout& layout) {
  TrialSpec spec =
      rank_trial_spec(group, layout.local_rank, o.cuda_lib, o.nccl_lib, o.init_timeout_s, o.size_timeout_s);
  spec.config.sweep.check = true;
  spec.config.sweep.in_place = false;
  spec.config.sweep.max_bytes_per_size = o.max_bytes_per_size;
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

// The tuner plugin the probe trial's NCCL said it runs, where its log says (not NCCL's own).
std::optional<std::string> logged_tuner(const std::vector<NcclInfoLog>& logs) {
  for (const NcclInfoLog& log : logs)
    if (const auto tuner = tuner_in_effect(log); tuner && *tuner != "internal") return tuner;
  return std::nullopt;
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

// The journal at --journal (default <out>/journal.jsonl), and with --resume the trials it holds.
// The journal usually lives in the store: its directories get the store's modes.
Result<Journal> open_journal(const TuneOptions& o, std::vector<JournalEntry>& resumed, TuneConsole& console) {
  const std::string path =
      o.journal.empty() ? (std::filesystem::path(o.out_dir) / "journal.jsonl").string() : o.journal;
  if (const Status made = make_store_directories(std::filesystem::path(path).parent_path()); !made)
    return Error{made.error()};
  if (o.resume && std::filesystem::exists(path)) {
    auto entries = Journal::read(path);
    if (!entries) return Error{entries.error()};
    resumed = std::move(*entries);
    console.message(fmt::format("nccltune tune: resuming: {} finished trials in {}", resumed.size(), path));
  }
  return Journal::open(path);
}

// Writes one count's profile, checks that env will take it and prints `show`'s summary of it, with
// what a profile cannot say: the trials the journal answered. The profile's path, or "" when it
// could not be written (said on the console).
std::string write_and_summarize(const TuneOptions& o, const Profile& profile, const StrategyResult& result,
                                TuneConsole& console) {
  std::filesystem::path written;
  if (auto saved = write_profile(o.out_dir, profile, &written); !saved) {
    console.message("nccltune tune: " + saved.error());
    return "";
  }
  warn_if_env_refuses(console, o.out_dir, written);
  console.message("\n" + render_profile_summary(profile, written.string()));
  // The counts, each named as what it is (search/trial_counts.h); the failed configs are the
  // profile's `failed` list, which show printed above.
  console.message(fmt::format(
      "{}; {} measurements against --max-trials (a pair counts one), {} communicator inits",
      describe_trial_counts(result.counts, profile.failed.size()), result.trials, result.communicators));
  // Last, what a job gets: the settings env withholds, and the tuner plugin's verdict of each
  // collective, on each shape, it was asked to serve.
  for (const WithheldSetting& w : profile.withheld)
    console.message(fmt::format("withheld from env: {}: {}", describe_env(w.env), w.why));
  const auto verdicts = [&](const std::string& shape, const std::map<std::string, CollectiveProfile>& ops) {
    for (const auto& [op, collective] : ops)
      if (collective.plugin.status != PluginStatus::none)
        console.message(fmt::format("the tuner plugin, {}{}: {}: {}", op, shape,
                                    plugin_status_words(collective.plugin.status), collective.plugin.why));
  };
  verdicts("", profile.collectives);
  for (const CommunicatorSection& section : profile.shapes) verdicts(" (" + describe_section(section) + ")", section.collectives);
  return written.string();
}

// What rank 0 knows of one node count: its shape, the space pruned for it, its peaks and NCCL's
// account of its trials.
struct CountPlan {
  ClusterShape shape;
  SearchSpace space;
  std::map<std::string, LineRate> peaks;
  NcclAccount account;
  // The defaults' repeats and the screens of one setting, every shape's points: what withheld
  // settings are read from (tune_profile/withheld_settings.h).
  std::vector<TrialMeasurement> baselines;
  std::vector<ScreenedEnv> screened;
};

// Keeps what withheld_settings reads: env trials of the defaults and of the screen.
TrialExecutor recording(TrialExecutor execute, CountPlan& at) {
  return [execute = std::move(execute), &at](const TrialRequest& r) {
    TrialMeasurement m = execute(r);
    if (r.pairs.empty() && r.plugin_profile.empty() && m.outcome == TrialOutcome::ok) {
      if (r.phase == TrialPhase::baseline && r.env.empty()) at.baselines.push_back(m);
      if (r.phase == TrialPhase::screen) at.screened.push_back({r.env, m});
    }
    return m;
  };
}

// The settings withheld from env: what ships for each shape (build_profile wrote their sections).
void add_shapes(Profile& profile, const CountPlan& at, const StrategyResult& result,
                const StrategyOptions& strategy) {
  // `withheld` is what won on one shape and lost on another: a tune of the world alone has one
  // shape, and writes v2 as before.
  const bool shapes = std::any_of(strategy.comms.begin(), strategy.comms.end(),
                                  [](CommRole role) { return role != CommRole::world; });
  if (!shapes) return;
  profile.withheld = withheld_settings(at.baselines, at.screened, profile.env, at.shape.nccl(), result.noise,
                                       strategy.tolerance);
}

// Rank 0: the strategy at every node count over their groups' trials, journaled, then a profile
// per count.
int lead(const JobRanks& ranks, const TuneOptions& o, const CountGroups& groups,
         std::map<int, CountPlan>& plans, const std::vector<int>& counts, TuneConsole& console) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<JournalEntry> resumed;
  auto journal = open_journal(o, resumed, console);
  if (!journal) {
    console.message("nccltune tune: " + journal.error());
    return stop_followers(ranks, 2);
  }
  NodeCountPlan plan;
  plan.counts = counts;
  plan.space_for = [&](int count) { return plans.at(count).space; };
  plan.executor_for = [&](int count) {
    CountPlan& at = plans.at(count);
    const JournalScope scope{at.shape.node_type_key, at.shape.node.nccl_version, count,
                             count == ranks.layout.nodes};
    // A resumed run measures again the few trials that read NCCL's log: the journal keeps times,
    // not what NCCL said, and the strategy and the profile need that.
    const TrialExecutor measure = [&, count](const TrialRequest& request) {
      const bool nccl_log = captures_nccl_log(request);
      std::vector<NcclInfoLog> nccl_logs;
      TrialMeasurement m = lead_trial(ranks, groups, count, request, nccl_log ? &nccl_logs : nullptr);
      // NCCL's own choices tell the strategy what the defaults use at the largest size
      // (shippable_env.h): a NCCL_ALGO or NCCL_PROTO list that keeps it may ship. The world's
      // only, and where split communicators ran beside it, only sizes all of them chose alike.
      if (nccl_log) {
        const bool split = !m.comms.empty();
        at.account.split_comms = at.account.split_comms || split;
        const NcclInfoLog log = at.account.add(request.env, nccl_logs);
        m.nccl_choices = logged_choices_at(split ? one_choice_per_size(log) : log, m.ops, m.sizes);
        for (std::size_t i = 0; i < m.comms.size() && i < m.nccl_choices.size(); ++i)
          if (m.comms[i] != kWorldComm) m.nccl_choices[i].reset();
      }
      return m;
    };
    return recording(journaled_executor(*journal, scope, resumable_trials(resumed, scope), measure,
                                        captures_nccl_log,
                                        [](const std::string& why) { spdlog::warn("journal: {}", why); }),
                     at);
  };
  const ProgressCallback progress = [&](const StrategyProgress& p, const TrialRequest& r,
                                        const TrialMeasurement& m) { console.trial(p, r, m); };
  const std::vector<NodeCountResult> results = run_node_count_plan(plan, o.strategy, progress);
  console.finish_line();
  std::vector<std::string> lines;
  for (const NodeCountResult& counted : results) {
    if (!counted.result.error.empty()) {
      console.message(fmt::format("nccltune tune: {} node(s): {}", counted.nodes, counted.result.error));
      return stop_followers(ranks, 1);
    }
    CountPlan& at = plans.at(counted.nodes);
    RunFacts run;
    run.peaks = at.peaks;
    run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    run.date = rfc3339_utc();
    at.shape.set_nccl(refined_layout(at.shape.nccl(), at.account));
    Profile profile = build_profile(at.shape, counted.result, o.strategy, run);
    if (!o.default_tuner_note.empty()) profile.notes.push_back(o.default_tuner_note);
    profile.provenance.nccl_observed = nccl_observed(at.account, profile);
    StrategyResult summary = counted.result;  // with the plugin's rounds, which the strategy did not run
    confirm_with_plugin(o, plan.executor_for(counted.nodes), profile, summary, console);
    add_shapes(profile, at, counted.result, o.strategy);
    const std::string written = write_and_summarize(o, profile, summary, console);
    if (written.empty()) return stop_followers(ranks, 1);
    lines.push_back(
        fmt::format("{}: {} ({}, {})", count_words(at.shape.nccl()), written,
                    counted.result.keep_defaults ? "keep defaults" : describe_env(counted.result.env),
                    describe_trial_counts(summary.counts, profile.failed.size())));
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (lines.size() == 1) {
    console.message("profile: " + lines.front() + " in " + format_duration(elapsed));
  } else {
    console.message(fmt::format("profiles, one per node count ({} in all):", format_duration(elapsed)));
    for (const std::string& line : lines) console.message("  " + line);
  }
  return stop_followers(ranks, 0);
}

// The shapes every trial measures (--comms, default all three on more than one node), and why
// fewer when the job cannot make them: a rail and a node of one node, or of one rank per node, are
// the world, and uneven nodes make no rails. On one NVLink domain of as many hosts as a host has
// GPUs, a rail is what NCCL counts as a node's shape (1 node x that many): measured once, as node.
std::vector<std::string> measured_comms(const TuneOptions& o, const NodeLayout& layout, bool whole,
                                        const NcclNodeLayout& nccl, std::string& why,
                                        std::string& same_shape) {
  const std::vector<std::string> world{std::string(kWorldComm)};
  std::vector<std::string> asked = o.comms;
  if (asked.empty()) asked = layout.nodes > 1 ? std::vector<std::string>{"world", "rail", "node"} : world;
  if (asked == world) return world;
  if (layout.nodes < 2) why = "one node: its rail and node communicators are the world";
  else if (layout.local_size < 2) why = "one rank per node: its rails are the world";
  else if (!whole) why = "the nodes hold different numbers of ranks, so there are no rails";
  if (!why.empty()) return world;
  const Shape rail = nccl_shape_in(CommRole::rail, nccl_counts(nccl)),
              node = nccl_shape_in(CommRole::node, nccl_counts(nccl));
  const auto has = [&](std::string_view name) { return std::find(asked.begin(), asked.end(), name) != asked.end(); };
  if (has("rail") && has("node") && rail.nodes == node.nodes && rail.ranks_per_node == node.ranks_per_node) {
    same_shape = fmt::format(
        "a rail (one rank per host) is 1 node x {} ranks to NCCL, as a node is (one NVLink domain): "
        "measured once, as node",
        node.ranks_per_node);
    asked.erase(std::find(asked.begin(), asked.end(), "rail"));
  }
  return asked;
}

// Every node holds as many ranks as the others: any count of them is a communicator of whole,
// alike nodes.
bool whole_nodes(RankGroup& group, const NodeLayout& layout) {
  return group.min(layout.local_size) == group.max(layout.local_size);
}

}  // namespace

int run_tune_job(RankGroup& group, const NodeLayout& layout, const TuneOptions& o, const TrialRunner& run) {
  const JobRanks ranks{group, layout, run};
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
  const bool whole = whole_nodes(group, layout);
  auto counts = node_count_plan(o.node_counts, layout.nodes, whole);
  if (!counts) return fail_all(counts.error(), 2);

  // A tiny probe trial: is the stack usable, and what GPU and NCCL does it see?
  TrialSpec probe_spec = base_spec(o, group, layout);
  probe_spec.config.sweep.min_bytes = probe_spec.config.sweep.max_bytes = 1024;
  probe_spec.config.sweep.iterations = 1;
  probe_spec.config.sweep.warmup = 0;
  NcclAccount probe_account;
  const LogGroups whole_logs = log_groups(group, layout);
  std::vector<NcclInfoLog> probe_logs;
  const TrialResult probe = run_with_nccl_log(group, whole_logs, run, probe_spec, probe_logs);
  probe_account.add({}, probe_logs);
  if (probe.outcome != TrialOutcome::ok) {
    if (leader) print_log_verdicts(console, probe_account);
    return fail_all(
        "NCCL's defaults cannot run here (" + std::string(to_string(probe.outcome)) + "): " + probe.reason,
        1);
  }

  // Every node's type and peaks; each count's shape (its first nodes) and the knobs that apply to
  // it, and the group of ranks its trials run on.
  std::vector<std::string> ops = o.strategy.collectives;
  ops.insert(ops.end(), o.strategy.guards.begin(), o.strategy.guards.end());
  GatheredNodes nodes =
      gather_nodes(ranks, o.from, ops, *counts, {probe.device.name, probe.device.sm},
                   nccl_version_string(probe.nccl_version), cuda_driver_version_string(probe.cuda_driver));
  if (!nodes.error.empty()) return fail_all(nodes.error, 2);
  const Result<std::string> plugin = usable_tuner_plugin(group, run, probe_spec, probe.nccl_version);
  // How NCCL counts the whole allocation's nodes (the probe's log reaches rank 0 only, the one that
  // plans; the others only follow).
  Result<NcclNodeLayout> whole_nccl = logged_layout(layout.nodes, layout.local_size, probe_logs);
  std::string layout_error = whole_nccl ? "" : whole_nccl.error();
  if (!whole_nccl) whole_nccl = NcclNodeLayout{layout.nodes, layout.local_size, layout.nodes, false};
  std::map<int, CountPlan> plans;
  CountGroups groups;
  for (const int count : *counts) {
    const auto first = [count](const auto& all) { return std::vector(all.begin(), all.begin() + count); };
    auto shape = cluster_shape(first(nodes.types), first(layout.hosts), o.allow_mixed);
    if (!shape) return fail_all(shape.error(), 2);
    if (const Result<NcclNodeLayout> nccl = subset_layout(count, *whole_nccl); nccl)
      shape->set_nccl(*nccl);
    else if (layout_error.empty())
      layout_error = nccl.error();
    ShapeFacts facts = shape_facts(*shape, probe.nccl_version);
    facts.collectives = o.strategy.collectives;  // the tuned ones: guards take no knob of their own
    const SearchSpace pruned = prune(*space, facts);
    plans[count] = CountPlan{*shape, pruned, nodes.peaks[count], {}, {}, {}};
    plans[count].account.node = nodes.own;
    CountGroup& on = groups[count];
    on.group = group.split(layout.node < count ? 0 : -1);
    if (!on.group) continue;
    on.logs = log_groups(*on.group, layout);
    on.spec = base_spec(o, *on.group, layout);
    if (plugin) on.spec.config.tuner_plugin = *plugin;
  }
  if (!leader) return follow(ranks, groups);
  if (!layout_error.empty()) {
    console.message("nccltune tune: " + layout_error);
    return stop_followers(ranks, 2);
  }

  const ClusterShape& whole_shape = plans.at(counts->front()).shape;
  console.message(fmt::format("nccltune tune: {} node(s) x {} GPU(s) of {}{}", layout.nodes,
                              whole_shape.node.gpus, whole_shape.node_type_key,
                              layout.emulated ? " (emulated nodes)" : ""));
  if (whole_nccl->mnnvl)
    console.message("nccltune tune: MNNVL: NCCL counts " + describe_profile_shape(nccl_counts(*whole_nccl)) +
                    " (an NVLink domain is one node to NCCL): profiles are written and served so");
  std::string knobs;
  for (const auto& k : plans.at(counts->front()).space.knobs) knobs += (knobs.empty() ? "" : " ") + k.name;
  console.message("nccltune tune: knobs: " + (knobs.empty() ? std::string("none") : knobs));
  if (counts->size() > 1)
    console.message(fmt::format(
        "nccltune tune: node counts {}: {} in full; at the others only the algorithm, protocol and channels "
        "are searched again, and {}'s other settings confirmed",
        fmt::join(*counts, ", "), counts->front(), counts->front()));
  // The probe ran on the whole allocation: its log is the largest count's when that is it.
  if (counts->front() == layout.nodes) plans.at(counts->front()).account.add({}, probe_logs);
  const bool pair_mode = plugin && o.pair_mode;
  if (pair_mode)
    console.message(
        "nccltune tune: pair mode: the NCCL_ALGO x NCCL_PROTO pairs of one env are measured in one "
        "communicator through " +
        *plugin);
  else
    console.message("nccltune tune: one env trial per NCCL_ALGO x NCCL_PROTO pair: " +
                    (plugin ? std::string("--pair-mode off") : plugin.error()));
  if (!plugin)
    console.message("nccltune tune: per-size choices are not confirmed through the tuner plugin: " +
                    plugin.error());
  // The trials of NCCL's defaults and of every env set no NCCL_TUNER_PLUGIN (the workers get no
  // NCCL_* variable but the trial's), so NCCL loads its default tuner in them as in jobs.
  const std::optional<NcclTunerLibrary> default_tuner = find_nccl_tuner(std::nullopt, std::nullopt);
  const std::optional<std::string> probe_tuner = logged_tuner(probe_logs);
  console.message("nccltune tune: " + default_tuner_header(default_tuner, probe_tuner, pair_mode));
  std::string fewer, same_shape;
  const std::vector<std::string> comms = measured_comms(o, layout, whole, *whole_nccl, fewer, same_shape);
  if (!fewer.empty()) console.message("nccltune tune: communicators: the world only: " + fewer);
  if (!same_shape.empty()) console.message("nccltune tune: communicators: " + same_shape);
  if (comms.size() > 1) {
    std::string named;
    for (const CommRole role : comm_roles(comms))
      named += (named.empty() ? "" : ", ") +
               describe_shape(nccl_shape_in(role, nccl_counts(*whole_nccl)), ShapeWords::brief);
    console.message("nccltune tune: communicators: " + named +
                    ", each measured in every trial's workers (split from the world); env ships only "
                    "what slows none of them");
  }
  TuneOptions options = o;
  options.comms = comms;
  options.strategy.comms = comm_roles(comms);
  options.strategy.scoped_lists = probe.nccl_version >= kScopedListsNcclVersion;
  options.strategy.pair_mode = pair_mode;
  options.tuner_plugin = plugin ? *plugin : "";
  options.default_tuner_note = default_tuner_note(default_tuner, probe_tuner);
  return lead(ranks, options, groups, plans, *counts, console);
}

}  // namespace nccltune
