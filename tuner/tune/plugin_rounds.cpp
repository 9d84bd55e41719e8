#include "tune/plugin_rounds.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "collectives/collective_spec.h"
#include "collectives/library_versions.h"
#include "collectives/size_sweep.h"
#include "collectives/worker_process.h"
#include "profile/nccl_names.h"
#include "search/objective.h"
#include "search/trial_counts.h"
#include "tune_profile/collectives_by_op.h"
#include "tune_profile/confirmation_sizes.h"
#include "tune_profile/plugin_confirmation.h"
#include "tune_profile/profile_builder.h"

namespace nccltune {
namespace {

bool has_per_size(const Profile& profile) {
  const auto collectives = collectives_by_op(profile);
  return std::any_of(collectives.begin(), collectives.end(),
                     [](const auto& collective) { return !collective.second->per_size.empty(); });
}

// The bytes every size of the rounds is a whole number of, so that each collective measures the
// size itself, not one rounded down below it (collectives/collective_spec.cpp), and an edge of a
// range is measured inside the range: the sweep's element (tune sets no type: its default), times
// the ranks where a collective divides the buffer among them (all_gather, reduce_scatter,
// alltoall: one element on several ranks is no whole element each). `ranks`: the world's, which
// the rail's and the node's divide (the profile's shape: tune runs one rank per GPU). Were it
// wrong, a collective would measure a size rounded down, and the rounds judge the size it reports.
std::uint64_t whole_elements(const std::vector<std::string>& ops, int ranks) {
  const std::size_t element = element_size(SweepOptions{}.type);
  const bool per_rank = std::any_of(ops.begin(), ops.end(), [&](const std::string& op) {
    const CollectiveSpec* spec = find_collective(op);
    return spec != nullptr && spec->layout(element, element, ranks).bytes != element;
  });
  return per_rank ? element * static_cast<std::uint64_t>(std::max(1, ranks)) : element;
}

// What the rounds measure: the final grid, and inside every served range of `profile` the sizes
// off it that confirm the range where it ships (tune_profile/confirmation_sizes.h). One request
// measures every collective on every communicator at the same sizes, so the list is the union.
std::vector<std::uint64_t> rounds_sizes(const StrategyOptions& s, const std::vector<std::string>& ops,
                                        const Profile& profile) {
  const std::vector<std::uint64_t> grid = grid_sizes(s.final_grid);
  ConfirmationSizeOptions options;
  options.align_bytes = whole_elements(ops, profile.shape.ranks);
  std::set<std::uint64_t> sizes(grid.begin(), grid.end());
  for (const auto& [op, collective] : collectives_by_op(profile)) {
    if (collective->guard) continue;
    const std::vector<std::uint64_t> own = confirmation_sizes(collective->per_size, grid, options);
    sizes.insert(own.begin(), own.end());
  }
  sizes.erase(0);  // a listed size must be above 0 (collectives/size_sweep.h)
  return {sizes.begin(), sizes.end()};
}

// The A/B rounds of NCCL's defaults (A) against the env with the tuner plugin serving `profile`
// (B), in fresh workers, on the final grid and the confirmation's sizes off it, with the guards;
// nullopt when a round failed (`why`). A point counts as served only when the plugin served it in
// every B round.
std::optional<PluginRounds> plugin_rounds(const TuneOptions& o, const TrialExecutor& execute,
                                          const Profile& profile, std::string& why) {
  const StrategyOptions& s = o.strategy;
  std::vector<std::string> ops = s.collectives;
  ops.insert(ops.end(), s.guards.begin(), s.guards.end());
  const std::string text = profile_to_yaml(profile);  // as the plugin reads it
  const std::vector<std::uint64_t> sizes = rounds_sizes(s, ops, profile);
  std::vector<std::vector<double>> a_runs, b_runs;
  PluginRounds rounds;
  const int count = std::max(1, s.confirm_rounds);
  for (int round = 0; round < count; ++round) {
    // Repeats after the strategy's own: a resumed run never mistakes one for the other.
    TrialRequest a{{}, TrialPhase::confirm, s.final_grid, s.final_iterations, s.warmup, 100 + round, ops, {},
                   {}, comm_names(s.comms), sizes};
    TrialRequest b = a;
    b.env = profile.env;
    b.plugin_profile = text;
    for (const TrialRequest& request : {a, b}) {
      const TrialMeasurement m = execute(request);
      if (m.outcome != TrialOutcome::ok) {
        why = std::string(request.plugin_profile.empty() ? "the defaults" : "env + tuner plugin") +
              " failed (" + std::string(to_string(m.outcome)) + "): " + m.reason;
        return std::nullopt;
      }
      rounds.ops = point_ops(m);
      rounds.sizes = m.sizes;
      if (request.plugin_profile.empty()) {
        a_runs.push_back(m.busbw);
        continue;
      }
      b_runs.push_back(m.busbw);
      if (rounds.served.empty()) rounds.served.assign(m.sizes.size(), 1);
      for (std::size_t i = 0; i < rounds.served.size(); ++i)
        rounds.served[i] &= i < m.plugin_served.size() ? m.plugin_served[i] : 0;
      if (rounds.declined_why.empty()) rounds.declined_why = m.plugin_declined;
    }
  }
  rounds.defaults = mean_curve(a_runs);
  rounds.with_plugin = mean_curve(b_runs);
  rounds.rounds = count;
  return rounds;
}

// What confirm_with_plugin decides, on trials that are counted already. A second set of rounds
// judges the profile as the first left it (cut back, or without what it withheld), at the sizes
// that confirm it now (a cut range's new edge among them); its measurements are the ones recorded,
// and what it cuts in turn is not measured again.
void confirm_per_size(const TuneOptions& o, const TrialExecutor& execute, Profile& profile, TuneConsole& console) {
  std::vector<WithheldRange> withheld;
  std::optional<PluginRounds> last;
  for (int attempt = 0; attempt < 2 && has_per_size(profile); ++attempt) {
    std::string why;
    std::optional<PluginRounds> rounds = plugin_rounds(o, execute, profile, why);
    if (!rounds) {
      for (auto& [op, collective] : collectives_by_op(profile)) collective->per_size.clear();
      profile.provenance.plugin_confirmation = "per-size choices dropped: " + why;
      console.message("nccltune tune: the tuner plugin's per-size choices are not shipped: " + why);
      return;
    }
    const std::vector<WithheldRange> now = withheld_ranges(profile, *rounds, o.strategy.tolerance);
    cut_ranges(profile, now);
    withheld.insert(withheld.end(), now.begin(), now.end());
    last = std::move(rounds);
    if (now.empty()) break;
  }
  if (!last) return;
  record_with_plugin(profile, *last, o.strategy.objective, o.strategy.tolerance, withheld);
  for (const WithheldRange& range : withheld) {
    const std::string what = range.kept ? "cut back" : "withheld";
    console.message(range.served ? "nccltune tune: per-size choice " + what +
                                       ", slower than the defaults under the plugin: " + describe(range)
                                 : "nccltune tune: per-size choice " + what + ", not served by the plugin: " +
                                       describe(range) + ": " + range.why);
  }
}

}  // namespace

// Tuner plugin API v3, which pair mode and per-size choices need: NCCL 2.22.0.
constexpr int kPairModeNcclVersion = 22200;
Result<std::string> usable_tuner_plugin(RankGroup& group, const TrialRunner& run, TrialSpec spec,
                                        int nccl_version) {
  if (nccl_version < kPairModeNcclVersion)
    return Error{"NCCL " + nccl_version_string(nccl_version) + " has no tuner plugin API v3 (2.22 or later)"};
  const std::string plugin = installed_tuner_plugin();
  if (group.min(plugin.empty() ? 0 : 1) == 0)
    return Error{"libnccl-tuner-nccltune.so is not next to nccltune (or in ../lib) on every node"};
  spec.config.tuner_plugin = plugin;
  spec.env["NCCL_TUNER_PLUGIN"] = plugin;
  spec.config.pairs = {{"Ring", "Simple", *nccl_algorithm_index("Ring"), *nccl_protocol_index("Simple")}};
  const TrialResult tried = run(group, spec);
  if (tried.outcome != TrialOutcome::ok)
    return Error{"a trial under the plugin failed (" + std::string(to_string(tried.outcome)) +
                 "): " + tried.reason};
  if (tried.unavailable.empty() || tried.unavailable.front() != 0)
    return Error{"NCCL did not run the pair the plugin forced (was the plugin loaded and asked?)"};
  return plugin;
}

void confirm_with_plugin(const TuneOptions& o, const TrialExecutor& execute, Profile& profile,
                         StrategyResult& summary, TuneConsole& console) {
  if (o.tuner_plugin.empty() || !has_per_size(profile)) return;
  std::vector<FailedTrial> plugin_failed;
  const TrialExecutor count_trials = [&](const TrialRequest& r) {
    TrialMeasurement m = execute(r);
    ++summary.trials;
    count_trial(summary.counts, r, m);
    // Its line, numbered on from the strategy's: the last trial line is the summary's count.
    StrategyProgress line;
    line.env_trial = summary.counts.trials;
    line.trial = line.planned = summary.trials;
    line.phase = r.phase;
    console.trial(line, r, m);
    summary.cached_trials += m.cached ? 1 : 0;
    summary.failed_trials += m.outcome == TrialOutcome::ok ? 0 : 1;
    summary.communicators += m.communicators;
    summary.workers += m.workers;
    // A round that fails under the plugin is a failed config too: env + the plugin serving.
    if (m.outcome != TrialOutcome::ok)
      plugin_failed.push_back(
          {r.env, m.outcome,
           (r.plugin_profile.empty() ? "in the rounds with the tuner plugin: "
                                     : "with the tuner plugin serving this profile: ") +
               m.reason});
    return m;
  };
  confirm_per_size(o, count_trials, profile, console);
  for (FailedTrial& failed : plugin_failed)
    if (std::none_of(profile.failed.begin(), profile.failed.end(), [&](const FailedTrial& f) {
          return f.env == failed.env && f.outcome == failed.outcome;  // named once, as the strategy does
        }))
      profile.failed.push_back(std::move(failed));
  profile.provenance.trials = summary.counts.trials;
  profile.provenance.pairs = summary.counts.pairs;
  profile.provenance.failed_trials = static_cast<int>(profile.failed.size());
}

}  // namespace nccltune
