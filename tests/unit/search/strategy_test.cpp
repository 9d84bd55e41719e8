// The search strategy (tuner/strategy.cpp) against fake-GPU models whose optimum is known
// (tests/fixtures/models/tune-*.yaml), through the model executor (tests/support/): the default
// search space pruned for 2 nodes x 8 GPUs with NVSwitch and NICs, 16 ranks, an injected clock
// that advances by each trial's synthetic duration. Each model's result is compared with the
// best of the exhaustive grid (model_executor.h explains why its reduced cross has the same best).
#include "search/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dgx_shape.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "profile/profile.h"
#include "profile/size_ranges.h"
#include "search/crossover_refinement.h"
#include "search/default_search_space.h"
#include "search/search_space.h"

namespace nccltune {
namespace {

using test_support::final_sizes;
using test_support::grid_best;
using test_support::grid_configs;
using test_support::grid_size;
using test_support::kRanks;
using test_support::load_model;
using test_support::model_fault;
using test_support::model_objective;
using test_support::model_point;
using test_support::ModelExecutor;

// The per-size choices of all_reduce, the one collective these runs tune.
const std::vector<SizeChoice>& all_reduce_choices(const StrategyResult& result) {
  static const std::vector<SizeChoice> none;
  const auto it = result.per_size.find({kAllReduce});
  return it == result.per_size.end() ? none : it->second;
}


struct ModelRun {
  StrategyResult result;
  double objective = 0;  // noiseless, of result.env
  double simulated_s = 0;
};

ModelRun run_model(const fake::FakeModel& model, StrategyOptions options = {}, int nranks = kRanks) {
  ModelExecutor executor(model, nranks);
  if (!options.clock_s) options.clock_s = executor.clock();
  ModelRun run;
  run.result = run_strategy(test_support::two_node_space(), options, executor.executor());
  run.objective =
      model_objective(model, run.result.env, nranks, final_sizes(), options.objective, options.tolerance);
  run.simulated_s = executor.stats().simulated_s;
  return run;
}

// The shared checks: a valid result, trials <= 15% of the grid, within 1% of the grid's best.
void expect_near_grid_best(const fake::FakeModel& model, const ModelRun& run,
                           const StrategyOptions& options = {}) {
  EXPECT_TRUE(run.result.error.empty()) << run.result.error;
  EXPECT_EQ(run.result.keep_defaults, run.result.env.empty());
  EXPECT_LE(static_cast<double>(run.result.trials), 0.15 * static_cast<double>(grid_size(test_support::two_node_space())));
  const auto best =
      grid_best(model, test_support::two_node_space(), kRanks, final_sizes(), options.objective, options.tolerance);
  EXPECT_GE(run.objective, 0.99 * best.objective)
      << "strategy chose " << describe_env(run.result.env) << " (" << run.objective << "), grid best "
      << describe_env(best.env) << " (" << best.objective << ")";
}

const SizeChoice* choice_at(const StrategyResult& result, std::uint64_t bytes) {
  for (const auto& choice : all_reduce_choices(result))
    if (choice.min_bytes == bytes) return &choice;
  return nullptr;
}

// Every single NCCL_ALGO x NCCL_PROTO setting that runs, fastest first: (time, "Algo/Proto").
std::vector<std::pair<double, std::string>> ranked_pairs(const fake::FakeModel& model, std::uint64_t bytes,
                                                         const Env& base = {}) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const char* algo : {"Ring", "Tree", "NVLS", "NVLSTree"}) {
    for (const char* proto : {"LL", "LL128", "Simple"}) {
      Env env = base;
      env["NCCL_ALGO"] = algo;
      env["NCCL_PROTO"] = proto;
      if (const auto point = model_point(model, env, kRanks, bytes))
        ranked.emplace_back(point->time_us, point->algo + "/" + point->proto);
    }
  }
  std::sort(ranked.begin(), ranked.end());
  return ranked;
}

bool has_failure(const StrategyResult& result, const Env& env, TrialOutcome outcome) {
  return std::any_of(result.failed.begin(), result.failed.end(), [&](const FailedTrial& failed) {
    return failed.env == env && failed.outcome == outcome && !failed.reason.empty();
  });
}

// ---- the model executor -----------------------------------------------------------------------

TEST(StrategyModelExecutor, DefaultSpaceGridIsTheFullCrossProduct) {
  // 15 knobs apply to 2 NVSwitch nodes with NICs tuning all_reduce on NCCL 2.28.9 (NCCL_NVLS_NCHANNELS
  // the 15th); each is unset or one of its values.
  ASSERT_EQ(test_support::two_node_space().knobs.size(), 15u);
  std::uint64_t expected = 1;
  for (const auto& knob : test_support::two_node_space().knobs) expected *= knob.values.size() + 1;
  EXPECT_EQ(grid_size(test_support::two_node_space()), expected);
  SearchSpace small;
  Knob algo;
  algo.name = "NCCL_ALGO";
  algo.values = {"Ring", "Tree"};
  Knob proto;
  proto.name = "NCCL_PROTO";
  proto.values = {"LL"};
  small.knobs = {algo, proto};
  const std::vector<Env> configs = grid_configs(small);
  EXPECT_EQ(configs.size(), 6u);
  EXPECT_EQ(grid_size(small), 6u);
  EXPECT_NE(std::find(configs.begin(), configs.end(), Env{}), configs.end());
  EXPECT_NE(std::find(configs.begin(), configs.end(), Env({{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL"}})),
            configs.end());
}

TEST(StrategyModelExecutor, MeasuresLikeTheStackWithReproducibleNoise) {
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  const ModelExecutor executor(model, kRanks);
  TrialRequest request;
  request.env = {{"NCCL_NET_GDR_LEVEL", "SYS"}};
  request.phase = TrialPhase::screen;
  request.grid = {8, 1u << 20, 8};
  const TrialMeasurement a = executor(request);
  const TrialMeasurement again = executor(request);
  ASSERT_EQ(a.outcome, TrialOutcome::ok);
  EXPECT_EQ(a.sizes, grid_sizes(request.grid));
  EXPECT_EQ(a.time_us, again.time_us);  // same (env, phase, repeat): same numbers
  request.repeat = 1;
  const TrialMeasurement other = executor(request);
  EXPECT_NE(a.time_us, other.time_us);  // another repeat: other noise
  for (std::size_t i = 0; i < a.sizes.size(); ++i) {
    const double bytes = static_cast<double>(a.sizes[i]);
    EXPECT_NEAR(a.busbw[i], bytes / (a.time_us[i] * 1e-6) / 1e9 * 2 * (kRanks - 1) / kRanks,
                1e-9 * a.busbw[i]);
    const auto noiseless = model_point(model, request.env, kRanks, a.sizes[i]);
    ASSERT_TRUE(noiseless);
    EXPECT_NEAR(a.time_us[i] / noiseless->time_us, 1.0, 0.08);  // cv 2%, slowest of 16 ranks
  }
  EXPECT_GT(a.duration_s, 0);
  EXPECT_EQ(executor.stats().trials, 3);
  EXPECT_DOUBLE_EQ(executor.clock()(), 3 * a.duration_s);
}

TEST(StrategyModelExecutor, FaultsBecomeTrialOutcomes) {
  const fake::FakeModel model = load_model("tune-faults.yaml");
  const ModelExecutor executor(model, kRanks);
  auto outcome = [&](Env env) {
    TrialRequest request;
    request.env = std::move(env);
    const TrialMeasurement m = executor(request);
    EXPECT_TRUE(m.outcome == TrialOutcome::ok || !m.reason.empty());
    return m.outcome;
  };
  EXPECT_EQ(outcome({}), TrialOutcome::ok);
  EXPECT_EQ(outcome({{"NCCL_NET_GDR_LEVEL", "PHB"}}), TrialOutcome::timeout);
  EXPECT_EQ(outcome({{"NCCL_NET_GDR_LEVEL", "3"}}), TrialOutcome::timeout);  // 3 is PHB, as NCCL reads it
  EXPECT_EQ(outcome({{"NCCL_BUFFSIZE", "16777216"}}), TrialOutcome::crash);
  EXPECT_EQ(outcome({{"NCCL_NTHREADS", "128"}}), TrialOutcome::wrong_data);
  EXPECT_EQ(outcome({{"NCCL_MIN_NCHANNELS", "32"}}), TrialOutcome::init_error);
  // No such pair: NCCL inits, and the first all_reduce fails (topoGetAlgoInfo), as the worker's sweep.
  EXPECT_EQ(outcome({{"NCCL_ALGO", "NVLS"}, {"NCCL_PROTO", "LL"}}), TrialOutcome::crash);
  EXPECT_EQ(outcome({{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_PXN_DISABLE", "1"}}), TrialOutcome::timeout);
  EXPECT_FALSE(model_fault(model, {{"NCCL_NET_GDR_LEVEL", "SYS"}}, kRanks));
}

TEST(StrategyModelExecutor, SlowRankSetsTheTime) {
  // CROSS_NIC=0 makes rank 3 1.5x slower: the trial's time is the slowest rank's.
  const fake::FakeModel model = load_model("tune-faults.yaml");
  const auto normal = model_point(model, {}, kRanks, 1u << 20);
  const auto slow = model_point(model, {{"NCCL_CROSS_NIC", "0"}}, kRanks, 1u << 20);
  ASSERT_TRUE(normal && slow);
  EXPECT_NEAR(slow->time_us / normal->time_us, 1.5, 1e-9);
  const ModelExecutor executor(model, kRanks);
  TrialRequest request;
  const TrialMeasurement defaults = executor(request);
  request.env = {{"NCCL_CROSS_NIC", "0"}};
  const TrialMeasurement m = executor(request);
  ASSERT_EQ(m.outcome, TrialOutcome::ok);
  ASSERT_EQ(m.time_us.size(), defaults.time_us.size());
  for (std::size_t i = 0; i < m.time_us.size(); ++i)
    EXPECT_NEAR(m.time_us[i] / defaults.time_us[i], 1.5, 0.08);
  EXPECT_LT(model_objective(model, request.env, kRanks, final_sizes(), Objective::balanced, 0.02), 1.0);
}

TEST(StrategyModelExecutor, GridBestMatchesTheUnreducedCrossOfTheKnobsTheModelReadsOnASmallSpace) {
  // The reduction (unread knobs unset, failing values dropped, dominated values of one-variable
  // knobs dropped) keeps the best: check against full enumeration of a small space.
  const fake::FakeModel model = load_model("tune-faults.yaml");
  SearchSpace small;
  for (const auto& knob : test_support::two_node_space().knobs)
    if (knob.name == "NCCL_NET_GDR_LEVEL" || knob.name == "NCCL_PXN_DISABLE" ||
        knob.name == "NCCL_NTHREADS" || knob.name == "NCCL_BUFFSIZE" || knob.name == "NCCL_MAX_NCHANNELS" ||
        knob.name == "NCCL_CROSS_NIC")
      small.knobs.push_back(knob);
  double best = 0;
  Env best_env;
  for (const Env& env : grid_configs(small)) {
    const double value = model_objective(model, env, kRanks, final_sizes(), Objective::balanced, 0.02);
    if (value > best) {
      best = value;
      best_env = env;
    }
  }
  const auto reduced = grid_best(model, small, kRanks, final_sizes(), Objective::balanced, 0.02);
  EXPECT_DOUBLE_EQ(reduced.objective, best);
  EXPECT_EQ(reduced.env, best_env);
  EXPECT_LT(reduced.configs, grid_size(small));
  EXPECT_EQ(best_env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}}));
}

TEST(StrategyModelExecutor, ModelsWithAnOptimalDefaultTableStayOptimalUnderTheirKnobs) {
  // The designs of tune-{defaults-best,one-knob,three-knobs,faults}.yaml: at every size of the
  // strategy's grids, with or without the model's best env, NCCL's default choice is the fastest
  // pair, so no NCCL_ALGO/NCCL_PROTO setting (list or not) can add to the optimum.
  StrategyOptions options;
  std::vector<std::uint64_t> sizes = grid_sizes(options.final_grid);
  for (auto size : grid_sizes(options.screen_grid)) sizes.push_back(size);
  for (const char* name :
       {"tune-defaults-best.yaml", "tune-one-knob.yaml", "tune-three-knobs.yaml", "tune-faults.yaml"}) {
    const fake::FakeModel model = load_model(name);
    const auto best = grid_best(model, test_support::two_node_space(), kRanks, final_sizes(), Objective::balanced, 0.02);
    for (const Env& env : {Env{}, best.env}) {
      for (const std::uint64_t bytes : sizes) {
        const auto chosen = model_point(model, env, kRanks, bytes);
        ASSERT_TRUE(chosen) << name;
        const auto ranked = ranked_pairs(model, bytes, env);
        ASSERT_FALSE(ranked.empty());
        EXPECT_EQ(chosen->algo + "/" + chosen->proto, ranked.front().second)
            << name << " " << describe_env(env) << " at " << bytes;
      }
    }
  }
}

// ---- the strategy on models with a known optimum ----------------------------------------------

TEST(StrategyModels, DefaultsBestKeepsDefaults) {
  const fake::FakeModel model = load_model("tune-defaults-best.yaml");
  const ModelRun run = run_model(model);
  EXPECT_TRUE(run.result.keep_defaults) << describe_env(run.result.env) << ": " << run.result.confirmation;
  EXPECT_TRUE(run.result.env.empty());
  EXPECT_FALSE(run.result.confirmation.empty());
  EXPECT_EQ(run.result.tuned_busbw, run.result.baseline_busbw);
  EXPECT_EQ(run.result.sizes, final_sizes());
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, OneKnobFindsGdrLevelSys) {
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  const ModelRun run = run_model(model);
  EXPECT_FALSE(run.result.keep_defaults) << run.result.confirmation;
  EXPECT_EQ(run.result.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}})) << run.result.confirmation;
  EXPECT_GT(run.result.score.value, 1.02);
  EXPECT_TRUE(run.result.score.acceptable);
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, OneKnobUnderTheBandwidthAndLatencyObjectives) {
  // GDR=SYS only scales bandwidth: a clear win on large sizes; at the latency objective's sizes
  // (<= 64 KiB) only the largest gain a little (+1.2% geometric mean, below the noise floor), so
  // either answer is right there, as long as nothing gets slower.
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  StrategyOptions bandwidth;
  bandwidth.objective = Objective::bandwidth;
  const ModelRun wide = run_model(model, bandwidth);
  // GDR=SYS moves the crossovers of the default table, so an NCCL_ALGO/NCCL_PROTO list (NCCL
  // picking the fastest allowed pair) may join it; the grid comparison below holds it to the best.
  ASSERT_TRUE(wide.result.env.count("NCCL_NET_GDR_LEVEL")) << wide.result.confirmation;
  EXPECT_EQ(wide.result.env.at("NCCL_NET_GDR_LEVEL"), "SYS") << wide.result.confirmation;
  EXPECT_GT(wide.result.score.value, 1.08);
  expect_near_grid_best(model, wide, bandwidth);
  StrategyOptions latency;
  latency.objective = Objective::latency;
  const ModelRun small = run_model(model, latency);
  EXPECT_TRUE(small.result.env.empty() || small.result.env == wide.result.env)
      << describe_env(small.result.env);
  EXPECT_GE(small.objective, 1.0);
  EXPECT_TRUE(small.result.score.acceptable);
}

TEST(StrategyModels, ThreeKnobInteractionFound) {
  const fake::FakeModel model = load_model("tune-three-knobs.yaml");
  const ModelRun run = run_model(model);
  const Env& env = run.result.env;
  auto value_of = [&](const std::string& name) { return env.count(name) ? env.at(name) : "(unset)"; };
  EXPECT_EQ(value_of("NCCL_MIN_NCHANNELS"), "32") << describe_env(env);
  EXPECT_EQ(value_of("NCCL_IB_QPS_PER_CONNECTION"), "4") << describe_env(env);
  EXPECT_EQ(value_of("NCCL_NET_GDR_LEVEL"), "SYS") << describe_env(env);
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, PerSizeAlgoProtoRanges) {
  const fake::FakeModel model = load_model("tune-per-size.yaml");
  const ModelRun run = run_model(model);
  const StrategyResult& r = run.result;
  ASSERT_EQ(all_reduce_choices(r).size(), final_sizes().size());
  // At every size where the fastest pair leads the next by 3% or more (beyond the noise), the
  // strategy's choice is that pair; and the model's ranges are the designed ones.
  int checked = 0;
  for (const std::uint64_t bytes : final_sizes()) {
    const auto ranked = ranked_pairs(model, bytes);
    ASSERT_GE(ranked.size(), 2u);
    const std::string expected = ranked[0].second;
    // On 2 nodes NCCL runs NVLSTree, never NVLS: it overtakes Ring/LL128 at about 6.4 MB.
    const char* designed = bytes <= 132624 ? "Tree/LL" : bytes <= 6400000 ? "Ring/LL128" : "NVLSTree/Simple";
    EXPECT_EQ(expected, designed) << bytes;
    if (ranked[1].first < 1.03 * ranked[0].first) continue;
    const SizeChoice* choice = choice_at(r, bytes);
    ASSERT_NE(choice, nullptr) << bytes;
    EXPECT_EQ(choice->algo + "/" + choice->proto, expected) << bytes;
    ++checked;
  }
  EXPECT_GE(checked, 8);
  // As the profile stores them: three ranges, in this order.
  std::vector<std::uint64_t> sizes;
  for (const auto& c : all_reduce_choices(r)) sizes.push_back(c.min_bytes);
  const std::vector<SizeChoice> ranges = size_ranges(sizes, all_reduce_choices(r));
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].algo + "/" + ranges[0].proto, "Tree/LL");
  EXPECT_EQ(ranges[1].algo + "/" + ranges[1].proto, "Ring/LL128");
  EXPECT_EQ(ranges[2].algo + "/" + ranges[2].proto, "NVLSTree/Simple");
  EXPECT_EQ(ranges[0].min_bytes, 0u);
  EXPECT_GT(ranges[1].min_bytes, 132624u);
  EXPECT_LE(ranges[1].min_bytes, 1920000u);
  EXPECT_GT(ranges[2].min_bytes, 1920000u);
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, PerSizeGainsThatNoEnvGivesStayInPerSize) {
  // NCCL's default table keeps Ring for large sizes where NVLSTree is faster (2 nodes). NCCL reads
  // a list as a filter and still picks Ring wherever the list allows it, and a list that excludes
  // Ring takes it from the middle sizes too, where Ring/LL128 is fastest: no env reaches NVLSTree.
  // The gain is the tuner plugin's, from per_size, and the env keeps NCCL's choices.
  const fake::FakeModel model = load_model("tune-per-size.yaml");
  const Env every{{"NCCL_ALGO", "Ring,Tree,NVLS,NVLSTree"}, {"NCCL_PROTO", "LL,LL128,Simple"}};
  EXPECT_DOUBLE_EQ(model_objective(model, every, kRanks, final_sizes(), Objective::balanced, 0.02), 1.0);
  const ModelRun run = run_model(model);
  EXPECT_FALSE(run.result.env.count("NCCL_ALGO") || run.result.env.count("NCCL_PROTO"))
      << describe_env(run.result.env);
  // What the plugin delivers: each size's per_size pair forced, against the defaults.
  double forced_gain = 1, sizes = 0;
  for (const SizeChoice& choice : all_reduce_choices(run.result)) {
    const auto forced = model_point(model, {{"NCCL_ALGO", choice.algo}, {"NCCL_PROTO", choice.proto}}, kRanks,
                                    choice.min_bytes);
    const auto own = model_point(model, {}, kRanks, choice.min_bytes);
    ASSERT_TRUE(forced && own);
    EXPECT_LE(forced->time_us, own->time_us * 1.03) << choice.min_bytes;
    forced_gain *= own->time_us / forced->time_us;
    ++sizes;
  }
  ASSERT_EQ(sizes, static_cast<double>(final_sizes().size()));
  EXPECT_GT(std::pow(forced_gain, 1 / sizes), 1.02);  // NVLSTree's +19-33% at the four largest sizes
}

TEST(StrategyModels, FaultsAreSkippedReportedAndNeverChosen) {
  const fake::FakeModel model = load_model("tune-faults.yaml");
  const ModelRun run = run_model(model);
  const StrategyResult& r = run.result;
  EXPECT_TRUE(has_failure(r, {{"NCCL_NET_GDR_LEVEL", "PHB"}}, TrialOutcome::timeout));
  EXPECT_TRUE(has_failure(r, {{"NCCL_BUFFSIZE", "16777216"}}, TrialOutcome::crash));
  EXPECT_TRUE(has_failure(r, {{"NCCL_NTHREADS", "128"}}, TrialOutcome::wrong_data));
  EXPECT_TRUE(has_failure(r, {{"NCCL_MIN_NCHANNELS", "32"}}, TrialOutcome::init_error));
  EXPECT_TRUE(has_failure(r, {{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL128"}}, TrialOutcome::wrong_data));
  // NCCL_ALGO=Tree lets NCCL pick Tree/LL128 at some sizes: it corrupts too.
  EXPECT_TRUE(has_failure(r, {{"NCCL_ALGO", "Tree"}}, TrialOutcome::wrong_data));
  EXPECT_TRUE(
      has_failure(r, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_PXN_DISABLE", "1"}}, TrialOutcome::timeout))
      << "the two helpful knobs were not crossed";
  EXPECT_EQ(r.failed_trials, static_cast<int>(r.failed.size()));
  for (const auto& failed : r.failed) {
    // Faults at init or the first op, or a pair that corrupts at some measured size.
    EXPECT_TRUE(
        model_fault(model, failed.env, kRanks) ||
        !test_support::model_score(model, failed.env, kRanks, final_sizes(), Objective::balanced, 0.02))
        << describe_env(failed.env);
    EXPECT_NE(failed.env, r.env);
  }
  EXPECT_FALSE(model_fault(model, r.env, kRanks)) << describe_env(r.env);
  EXPECT_EQ(r.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}})) << r.confirmation;
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, ReproducibleForOneSeed) {
  const fake::FakeModel model = load_model("tune-three-knobs.yaml");
  const ModelRun a = run_model(model);
  const ModelRun b = run_model(model);
  EXPECT_EQ(a.result.env, b.result.env);
  EXPECT_EQ(a.result.trials, b.result.trials);
  EXPECT_EQ(a.result.tuned_busbw, b.result.tuned_busbw);
}

TEST(StrategyModels, OptimaHoldAcrossNoiseSeeds) {
  for (const char* name : {"tune-defaults-best.yaml", "tune-one-knob.yaml", "tune-three-knobs.yaml",
                           "tune-per-size.yaml", "tune-faults.yaml"}) {
    const fake::FakeModel model = load_model(name);
    const auto best = grid_best(model, test_support::two_node_space(), kRanks, final_sizes(), Objective::balanced, 0.02);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      fake::FakeModel seeded = model;
      seeded.noise.seed = model.noise.seed + 7919 * seed;
      const ModelRun run = run_model(seeded);
      EXPECT_TRUE(run.result.error.empty()) << name;
      EXPECT_GE(run.objective, 0.99 * best.objective)
          << name << " seed " << seeded.noise.seed << ": " << describe_env(run.result.env);
    }
  }
}

TEST(StrategyModels, OptimaHoldAtEightRanks) {
  // The MPI test runs 8 ranks (2 emulated nodes x 4): the models keep their optima there.
  constexpr int kEight = 8;
  struct Case {
    const char* model;
    Env optimum;
  };
  for (const Case& c :
       {Case{"tune-defaults-best.yaml", {}}, Case{"tune-one-knob.yaml", {{"NCCL_NET_GDR_LEVEL", "SYS"}}},
        Case{"tune-three-knobs.yaml",
             {{"NCCL_IB_QPS_PER_CONNECTION", "4"},
              {"NCCL_MIN_NCHANNELS", "32"},
              {"NCCL_NET_GDR_LEVEL", "SYS"}}},
        Case{"tune-faults.yaml", {{"NCCL_NET_GDR_LEVEL", "SYS"}}}}) {
    const fake::FakeModel model = load_model(c.model);
    const auto best = grid_best(model, test_support::two_node_space(), kEight, final_sizes(), Objective::balanced, 0.02);
    if (c.optimum.empty()) {
      EXPECT_LT(best.objective, 1.005) << c.model;  // the grid's best is within the noise of the defaults
    } else {
      EXPECT_EQ(best.env, c.optimum) << c.model;
    }
    const ModelRun run = run_model(model, {}, kEight);
    EXPECT_EQ(run.result.env, c.optimum) << c.model << ": " << run.result.confirmation;
  }
  const fake::FakeModel per_size = load_model("tune-per-size.yaml");
  const ModelRun run = run_model(per_size, {}, kEight);
  std::vector<std::uint64_t> sizes;
  for (const auto& choice : all_reduce_choices(run.result)) sizes.push_back(choice.min_bytes);
  std::string ranges;
  for (const auto& range : size_ranges(sizes, all_reduce_choices(run.result)))
    ranges += range.algo + "/" + range.proto + " ";
  EXPECT_EQ(ranges, "Tree/LL Ring/LL128 NVLSTree/Simple ");
  EXPECT_FALSE(run.result.env.count("NCCL_ALGO")) << describe_env(run.result.env);  // per_size only
}

// ---- cases the strategy once got wrong, found with these tools --------------------------------

fake::Effect effect(fake::Condition when, double busbw_scale) {
  fake::Effect e;
  e.when = std::move(when);
  e.busbw_scale = busbw_scale;
  return e;
}

// The one-knob model's devices, tables and noise with other effects and faults.
fake::FakeModel variant(std::vector<fake::Effect> effects, std::vector<fake::Fault> faults = {}) {
  fake::FakeModel model = load_model("tune-one-knob.yaml");
  model.effects = std::move(effects);
  model.faults = std::move(faults);
  return model;
}

// The screening envs that set `name`, in the order they ran.
std::vector<Env> screens_setting(const fake::FakeModel& model, const std::string& name, StrategyResult* result) {
  ModelExecutor executor(model, kRanks);
  StrategyOptions options;
  options.clock_s = executor.clock();
  std::vector<Env> screens;
  const TrialExecutor run = executor.executor();
  *result = run_strategy(test_support::two_node_space(), options, [&](const TrialRequest& request) {
    if (request.phase == TrialPhase::screen && request.env.count(name)) screens.push_back(request.env);
    return run(request);
  });
  return screens;
}

TEST(StrategyModels, AKnobThatActsOnlyWithAnotherIsScreenedOnTopOfItsBestValue) {
  // NCCL_IB_SPLIT_DATA_ON_QPS (`with: NCCL_IB_QPS_PER_CONNECTION`) does nothing with one queue
  // pair: it is screened with QPS's best value (QPS=4 x1.08), and ships when it adds to it.
  const fake::Condition qps4{{"NCCL_IB_QPS_PER_CONNECTION", {"4"}}};
  const fake::Condition split{{"NCCL_IB_QPS_PER_CONNECTION", {"4"}}, {"NCCL_IB_SPLIT_DATA_ON_QPS", {"1"}}};
  StrategyResult result;
  std::vector<Env> screens =
      screens_setting(variant({effect(qps4, 1.08), effect(split, 1.06)}), "NCCL_IB_SPLIT_DATA_ON_QPS", &result);
  EXPECT_EQ(screens, (std::vector<Env>{{{"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_IB_SPLIT_DATA_ON_QPS", "1"}}}));
  EXPECT_EQ(result.env, Env({{"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_IB_SPLIT_DATA_ON_QPS", "1"}}))
      << result.confirmation;
  // When it adds nothing to QPS=4, it does not ship.
  screens = screens_setting(variant({effect(qps4, 1.08)}), "NCCL_IB_SPLIT_DATA_ON_QPS", &result);
  EXPECT_EQ(screens.size(), 1u);
  EXPECT_EQ(result.env, Env({{"NCCL_IB_QPS_PER_CONNECTION", "4"}})) << result.confirmation;
  // When no QPS value beats the defaults, it is not screened at all.
  screens = screens_setting(variant({effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 1.15)}),
                            "NCCL_IB_SPLIT_DATA_ON_QPS", &result);
  EXPECT_TRUE(screens.empty());
  EXPECT_EQ(result.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}}));
}

TEST(StrategyModels, SecondBestValueTriedWhenTheBestValueFailsInTheCross) {
  // GDR=SYS x1.15; QPS=8 x1.10 and QPS=4 x1.08 alone; GDR=SYS with QPS=8 crashes. The cross
  // takes each knob's best value (QPS=8) and the crossed pair crashes; the strategy then crosses
  // again with one knob moved to its next value that beat the noise, and finds QPS=4 with GDR=SYS
  // (the grid's best) instead of ending with GDR=SYS alone, about 2% short.
  const fake::FakeModel model = variant(
      {effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 1.15), effect({{"NCCL_IB_QPS_PER_CONNECTION", {"8"}}}, 1.10),
       effect({{"NCCL_IB_QPS_PER_CONNECTION", {"4"}}}, 1.08)},
      {fake::Fault{{{"NCCL_NET_GDR_LEVEL", {"SYS"}}, {"NCCL_IB_QPS_PER_CONNECTION", {"8"}}},
                   fake::FaultKind::crash,
                   std::nullopt,
                   2}});
  const ModelRun run = run_model(model);
  EXPECT_TRUE(has_failure(run.result, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_IB_QPS_PER_CONNECTION", "8"}},
                          TrialOutcome::crash));
  EXPECT_EQ(run.result.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}}));
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, SeveralSmallHelpersAreCrossedTogether) {
  // Five knobs each give x1.04 bus bandwidth (about +1.3% on the screening objective each),
  // together +5.5%. The noise floor is measured on the objective itself (how far repeats of the
  // defaults score from their median), so each small gain counts and the five are crossed.
  const fake::FakeModel model = variant(
      {effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 1.04), effect({{"NCCL_IB_QPS_PER_CONNECTION", {"4"}}}, 1.04),
       effect({{"NCCL_CROSS_NIC", {"1"}}}, 1.04), effect({{"NCCL_NET_GDR_READ", {"1"}}}, 1.04),
       effect({{"NCCL_BUFFSIZE", {"8388608"}}}, 1.04)});
  const ModelRun run = run_model(model);
  EXPECT_FALSE(run.result.keep_defaults) << run.result.confirmation;
  expect_near_grid_best(model, run);
}

TEST(StrategyModels, PerSizeIsMeasuredWithTheChosenEnv) {
  // GDR=SYS scales bus bandwidth x2.5, which moves the Tree/LL -> Ring/LL128 crossover from 132K
  // to 331K: with the chosen env, Tree/LL is the fastest pair at 256K. The first ALGO x PROTO
  // cross runs with every other knob unset (it says Ring/LL128 there); the strategy measures the
  // pairs again under the finalist's other settings, and the profile's per_size comes from that.
  const fake::FakeModel model = variant({effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 2.5)});
  const ModelRun run = run_model(model);
  ASSERT_EQ(run.result.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  for (const std::uint64_t bytes : final_sizes()) {
    const auto ranked = ranked_pairs(model, bytes, run.result.env);
    if (ranked.size() < 2 || ranked[1].first < 1.03 * ranked[0].first) continue;
    const SizeChoice* choice = choice_at(run.result, bytes);
    ASSERT_NE(choice, nullptr) << bytes;
    EXPECT_EQ(choice->algo + "/" + choice->proto, ranked[0].second) << bytes;
  }
}

TEST(StrategyModels, AFinalistUnderWhichAPairCorruptsDataIsNotShipped) {
  // GDR=SYS scales bus bandwidth x2.5, but with it Tree/LL128, fine with nothing set, corrupts
  // data. A job with NCCL_NET_GDR_LEVEL=SYS and no NCCL_ALGO/NCCL_PROTO could have NCCL pick
  // Tree/LL128 at some size: the strategy keeps the defaults and says why.
  const fake::FakeModel model = variant(
      {effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 2.5)},
      {fake::Fault{{{"NCCL_NET_GDR_LEVEL", {"SYS"}}, {"NCCL_ALGO", {"Tree"}}, {"NCCL_PROTO", {"LL128"}}},
                   fake::FaultKind::corrupt,
                   std::nullopt,
                   2}});
  const ModelRun run = run_model(model);
  EXPECT_TRUE(has_failure(run.result,
                          {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL128"}},
                          TrialOutcome::wrong_data));
  EXPECT_TRUE(run.result.keep_defaults);
  EXPECT_TRUE(run.result.env.empty());
  EXPECT_NE(run.result.confirmation.find("makes an NCCL_ALGO x NCCL_PROTO pair fail"), std::string::npos)
      << run.result.confirmation;
}

// The requests of one strategy run, and its result.
struct RecordedRun {
  StrategyResult result;
  std::vector<TrialRequest> requests;
  std::vector<TrialOutcome> outcomes;

  std::vector<Env> envs_of(TrialPhase phase, bool ok_only = false) const {
    std::vector<Env> envs;
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (requests[i].phase == phase && (!ok_only || outcomes[i] == TrialOutcome::ok))
        envs.push_back(requests[i].env);
    return envs;
  }
};

// How a test answers one request: by the model (`measure`) or otherwise.
using Answer = std::function<TrialMeasurement(const TrialRequest&, const TrialExecutor& measure)>;

RecordedRun run_recorded(const fake::FakeModel& model, StrategyOptions options = {},
                         const Answer& answer = {}) {
  ModelExecutor executor(model, kRanks);
  options.clock_s = executor.clock();
  RecordedRun run;
  const TrialExecutor measure = executor.executor();
  run.result = run_strategy(test_support::two_node_space(), options, [&](const TrialRequest& request) {
    TrialMeasurement m = answer ? answer(request, measure) : measure(request);
    run.requests.push_back(request);
    run.outcomes.push_back(m.outcome);
    return m;
  });
  return run;
}

StrategyOptions pair_mode_options() {
  StrategyOptions options;
  options.pair_mode = true;
  return options;
}

// What a worker run that crashed returns.
TrialMeasurement crashed_run() {
  TrialMeasurement m;
  m.outcome = TrialOutcome::crash;
  m.reason = "worker killed by SIGSEGV";
  m.workers = kRanks;
  m.communicators = 1;
  return m;
}

TEST(StrategyPairMode, FindsWhatEnvTrialsFindWithFewerCommunicators) {
  for (const char* name : {"tune-one-knob.yaml", "tune-per-size.yaml", "tune-faults.yaml", "dgx-h100.yaml"}) {
    SCOPED_TRACE(name);
    const fake::FakeModel model = load_model(name);
    const ModelRun env_trials = run_model(model);
    const ModelRun in_process = run_model(model, pair_mode_options());
    EXPECT_EQ(in_process.result.env, env_trials.result.env);
    EXPECT_EQ(in_process.result.per_size.empty(), env_trials.result.per_size.empty());
    EXPECT_EQ(env_trials.result.communicators, env_trials.result.trials);
    EXPECT_EQ(env_trials.result.pairs_in_process, 0);
    EXPECT_GT(in_process.result.pairs_in_process, 0);
    // One communicator for all the pairs of a run, one per other trial.
    EXPECT_LT(in_process.result.communicators, in_process.result.trials);
  }
}

TEST(StrategyPairMode, ACorruptingPairFailsAloneAndKeepsTheFinalistFromShipping) {
  // As AFinalistUnderWhichAPairCorruptsDataIsNotShipped, with the pairs forced in one run: Tree/LL128
  // under GDR=SYS fails its own data check, the other pairs of that run still count.
  const fake::FakeModel model = variant(
      {effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 2.5)},
      {fake::Fault{{{"NCCL_NET_GDR_LEVEL", {"SYS"}}, {"NCCL_ALGO", {"Tree"}}, {"NCCL_PROTO", {"LL128"}}},
                   fake::FaultKind::corrupt,
                   std::nullopt,
                   2}});
  const ModelRun run = run_model(model, pair_mode_options());
  const Env corrupting{{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL128"}};
  EXPECT_TRUE(has_failure(run.result, corrupting, TrialOutcome::wrong_data));
  // Named once, though every run of the pairs under GDR=SYS failed it.
  EXPECT_EQ(std::count_if(run.result.failed.begin(), run.result.failed.end(),
                          [&](const FailedTrial& f) { return f.env == corrupting; }),
            1);
  EXPECT_TRUE(run.result.keep_defaults);
  EXPECT_NE(run.result.confirmation.find("makes an NCCL_ALGO x NCCL_PROTO pair fail"), std::string::npos)
      << run.result.confirmation;
}

TEST(StrategyPairMode, ARunThatCrashesIsMeasuredAgainPairByPair) {
  // A pair that crashes its worker takes the whole pair-mode run with it: the pairs are measured
  // again one env trial each, so the others still give their curves and per-size choices.
  const fake::FakeModel model = load_model("tune-per-size.yaml");
  int crashed_runs = 0;
  const StrategyResult r = run_recorded(model, pair_mode_options(),
                                        [&](const TrialRequest& request, const TrialExecutor& measure) {
                                          if (request.pairs.empty()) return measure(request);
                                          ++crashed_runs;
                                          return crashed_run();
                                        })
                               .result;
  EXPECT_GT(crashed_runs, 0);
  EXPECT_TRUE(has_failure(r, {}, TrialOutcome::crash));
  const StrategyResult env_trials = run_model(model).result;
  EXPECT_EQ(r.env, env_trials.env);
  EXPECT_FALSE(r.per_size.empty());
  EXPECT_EQ(r.pairs_in_process, 0);  // no run of pairs finished
}

TEST(StrategyPairMode, AlgoAndProtoAreSearchedAsPairsOnlyInRoundsJudgedOnTheirMedian) {
  // Pair mode screens no single NCCL_ALGO or NCCL_PROTO value (the cross measures every pair),
  // runs each cross and per-size measurement pair_rounds times, the per-size ones at the final
  // iterations, and one round's outlier does not pick a pair: in round 1 the slowest pair at 1M
  // is measured 100x faster than it is.
  const fake::FakeModel model = load_model("tune-per-size.yaml");
  const StrategyOptions options = pair_mode_options();
  std::optional<NcclChoice> lucky;  // the pair round 1 favours
  const RecordedRun run =
      run_recorded(model, options, [&](const TrialRequest& request, const TrialExecutor& measure) {
        TrialMeasurement m = measure(request);
        if (request.pairs.empty() || request.phase != TrialPhase::per_size) return m;
        std::optional<std::size_t> slowest;  // the point of the slowest pair that ran at 1M
        for (std::size_t i = 0; i < m.sizes.size(); ++i)
          if (m.sizes[i] == (1u << 20) && !m.unavailable[i] &&
              (!slowest || m.time_us[i] > m.time_us[*slowest]))
            slowest = i;
        if (request.repeat == 1 && slowest) {
          lucky = request.pairs[*slowest / (m.ops.size() / request.pairs.size())];
          m.time_us[*slowest] /= 100;
        }
        return m;
      });
  const StrategyResult& r = run.result;
  int cross_runs = 0, per_size_runs = 0;
  for (const TrialRequest& request : run.requests) {
    if (request.phase == TrialPhase::screen) {
      EXPECT_EQ(request.env.count("NCCL_ALGO"), 0u) << describe_env(request.env);
      EXPECT_EQ(request.env.count("NCCL_PROTO"), 0u) << describe_env(request.env);
    }
    // The refinement's runs (sizes between the grid's) are no round of the pairs.
    if (request.pairs.empty() || !request.sizes.empty()) continue;
    EXPECT_EQ(request.repeat, request.phase == TrialPhase::cross ? cross_runs : per_size_runs);
    (request.phase == TrialPhase::cross ? cross_runs : per_size_runs) += 1;
    EXPECT_EQ(request.iterations,
              request.phase == TrialPhase::per_size ? options.final_iterations : options.screen_iterations);
  }
  EXPECT_EQ(cross_runs, options.pair_rounds);
  EXPECT_EQ(per_size_runs, options.pair_rounds);
  ASSERT_TRUE(lucky);
  const SizeChoice* at_1m = choice_at(r, 1u << 20);
  ASSERT_NE(at_1m, nullptr);
  EXPECT_FALSE(at_1m->algo == lucky->algo && at_1m->proto == lucky->proto)
      << lucky->algo << "/" << lucky->proto;
  const ModelRun env_trials = run_model(model);
  const SizeChoice* env_trials_at_1m = choice_at(env_trials.result, 1u << 20);
  ASSERT_NE(env_trials_at_1m, nullptr);
  EXPECT_EQ(at_1m->algo + "/" + at_1m->proto, env_trials_at_1m->algo + "/" + env_trials_at_1m->proto);
}

TEST(StrategyPairMode, HalvingRunsMeasureTheirEnvThenItsPairsAndThePerSizePhaseOnlyTopsThemUp) {
  // One-knob: GDR=SYS and GDR=PHB are halved against the defaults. Each halving run measures its
  // env under NCCL's own choice first, then forces the cross's pairs in the same communicator; the
  // per-size phase then runs only what the shipped env's pairs lack of pair_rounds runs.
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  const StrategyOptions options = pair_mode_options();
  const RecordedRun run = run_recorded(model, options);
  const StrategyResult& r = run.result;
  ASSERT_EQ(r.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  int halving_runs_of_winner = 0, per_size_runs = 0;
  std::size_t cross_pairs = 0;
  for (const TrialRequest& request : run.requests) {
    if (request.phase == TrialPhase::cross && !request.pairs.empty()) cross_pairs = request.pairs.size();
    if (request.phase == TrialPhase::per_size) {
      EXPECT_EQ(request.env, r.env);
      if (request.sizes.empty()) ++per_size_runs;  // not the refinement's runs between grid sizes
    }
    if (request.phase != TrialPhase::halving) continue;
    ASSERT_EQ(request.pairs.size(), cross_pairs + 1) << describe_env(request.env);
    EXPECT_EQ(request.pairs.front(), kNcclOwnChoice);
    if (request.env == r.env) ++halving_runs_of_winner;
  }
  EXPECT_GT(halving_runs_of_winner, 0);
  EXPECT_EQ(per_size_runs, std::max(0, options.pair_rounds - halving_runs_of_winner));
  EXPECT_EQ(r.per_size.empty(), run_model(model).result.per_size.empty());
}

TEST(StrategyPairMode, AHalvingRunThatFailsAsAWholeMeasuresItsEnvAgainAlone) {
  // A halving run with pairs that crashes (which pair did is unknown): its env is measured again
  // without pairs, and the search finds what it finds without pair mode.
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  const RecordedRun run =
      run_recorded(model, pair_mode_options(), [](const TrialRequest& request, const TrialExecutor& measure) {
        if (request.phase != TrialPhase::halving || request.pairs.empty()) return measure(request);
        return crashed_run();
      });
  const StrategyResult& r = run.result;
  const std::vector<TrialRequest>& requests = run.requests;
  int crashed = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].phase != TrialPhase::halving || requests[i].pairs.empty()) continue;
    ++crashed;
    ASSERT_LT(i + 1, requests.size());
    EXPECT_EQ(requests[i + 1].env, requests[i].env);
    EXPECT_EQ(requests[i + 1].phase, TrialPhase::halving);
    EXPECT_TRUE(requests[i + 1].pairs.empty());
  }
  EXPECT_GT(crashed, 0);
  EXPECT_EQ(r.env, run_model(model).result.env);
  EXPECT_FALSE(r.per_size.empty());  // measured in per-size runs instead
}

// The pairs of the first cross that ran (NCCL_ALGO and NCCL_PROTO only, final grid).
std::vector<Env> pairs_that_ran(const RecordedRun& run) {
  std::vector<Env> pairs;
  for (const Env& env : run.envs_of(TrialPhase::cross, true))
    if (env.size() == 2 && env.count("NCCL_ALGO") && env.count("NCCL_PROTO") &&
        env.at("NCCL_ALGO").find(',') == std::string::npos)
      pairs.push_back(env);
  return pairs;
}

TEST(StrategyModels, PairsAreMeasuredAgainUnderTheFinalistsOtherSettingsOnly) {
  // One-knob: the finalist GDR=SYS sets more than NCCL_ALGO/NCCL_PROTO, so every pair that ran
  // on its own runs again with GDR=SYS, once.
  const RecordedRun one = run_recorded(load_model("tune-one-knob.yaml"));
  ASSERT_EQ(one.result.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  std::vector<Env> expected;
  for (Env pair : pairs_that_ran(one)) {
    pair["NCCL_NET_GDR_LEVEL"] = "SYS";
    expected.push_back(pair);
  }
  EXPECT_EQ(expected.size(), 7u);  // Ring and Tree x 3 protocols, NVLSTree/Simple (no NVLS on 2 nodes)
  EXPECT_EQ(one.envs_of(TrialPhase::per_size), expected);
  EXPECT_EQ(all_reduce_choices(one.result).size(), final_sizes().size());
  // Per-size: NCCL's defaults stay (no list reaches its gain), so the pairs the first cross
  // measured with nothing else set are the per-size choices.
  const RecordedRun per_size = run_recorded(load_model("tune-per-size.yaml"));
  EXPECT_TRUE(per_size.result.env.empty()) << describe_env(per_size.result.env);
  EXPECT_TRUE(per_size.envs_of(TrialPhase::per_size).empty());
  EXPECT_EQ(all_reduce_choices(per_size.result).size(), final_sizes().size());
}

TEST(StrategyModels, PerSizeChoicesAreAllowedByTheChosenEnv) {
  // The per-size model with GDR=SYS x1.15 on top, and NCCL's cost model running NVLSTree in the
  // middle, where it is never the fastest (Ring/LL128 has less latency and the same bandwidth):
  // leaving NVLSTree out makes NCCL pick the cheapest of the rest in its model there, which is
  // the fastest (Tree/LL, Ring/LL128), and keeps Ring/Simple, its own choice at the largest size.
  // Two settings do that, NCCL_NVLS_ENABLE=0 and a list without NVLSTree; the chosen env holds
  // one of them besides GDR=SYS (the list only when it adds to the rest). Only the pairs the env
  // lets run are measured again under it, and every per-size choice is one of them: none is
  // NVLSTree. The model gives `nccl_model`, so NCCL's pick is its cheapest cell, not a `default`
  // table: NVLSTree rated 12 us and 250 GB/s makes it NCCL's choice from ~75 KB to ~3.2 MB
  // (16 ranks), then Ring/LL128 to ~23 MB, then Ring/Simple.
  fake::FakeModel model = load_model("tune-per-size.yaml");
  model.effects.push_back(effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 1.15));
  ASSERT_TRUE(model.defaults.empty());
  model.nccl_model.at("NVLSTree").protos.at("Simple") = fake::ProtoCost{12, 250};
  model.algos.at("NVLSTree").protos.at("Simple").busbw_gbps = 300;
  const RecordedRun run = run_recorded(model);
  const Env& env = run.result.env;
  const auto value = [&](const char* name) { return env.count(name) ? env.at(name) : std::string(); };
  ASSERT_EQ(value("NCCL_NET_GDR_LEVEL"), "SYS") << describe_env(env);
  const bool list_drops_it = env.count("NCCL_ALGO") && ("," + value("NCCL_ALGO") + ",").find(",NVLSTree,") == std::string::npos;
  ASSERT_TRUE(value("NCCL_NVLS_ENABLE") == "0" || list_drops_it) << describe_env(env);
  EXPECT_FALSE(env.count("NCCL_PROTO")) << "every protocol wins somewhere: a list of all three filters nothing";
  std::vector<Env> expected;
  for (Env pair : pairs_that_ran(run)) {
    if (pair.at("NCCL_ALGO") == "NVLSTree") continue;
    for (const auto& [name, setting] : env)
      if (name != "NCCL_ALGO" && name != "NCCL_PROTO") pair[name] = setting;
    expected.push_back(pair);
  }
  EXPECT_LT(expected.size(), pairs_that_ran(run).size());  // NVLSTree/Simple ran, but the env stops it
  EXPECT_EQ(run.envs_of(TrialPhase::per_size), expected);
  ASSERT_EQ(all_reduce_choices(run.result).size(), final_sizes().size());
  for (const SizeChoice& choice : all_reduce_choices(run.result)) EXPECT_NE(choice.algo, "NVLSTree");
}

// A trial answered from gains alone: GDR=SYS x1.10 everywhere, and the list NCCL_ALGO=Ring,Tree
// x`list_gain` in the given phases (x1 elsewhere), so that a finalist carrying a list can be made
// to win the halving while the list gives nothing where it counts.
TrialExecutor gains_executor(std::map<TrialPhase, double> list_gain, std::vector<TrialRequest>* seen) {
  return [list_gain, seen](const TrialRequest& request) {
    if (seen) seen->push_back(request);
    double gain = 1;
    if (request.env.count("NCCL_NET_GDR_LEVEL")) gain *= 1.10;
    if (const auto it = list_gain.find(request.phase);
        it != list_gain.end() && request.env.count("NCCL_ALGO"))
      gain *= it->second;
    TrialMeasurement m;
    m.duration_s = 0.1;
    for (const std::string& op : request.collectives)
      for (const std::uint64_t bytes : grid_sizes(request.grid)) {
        m.ops.push_back(op);
        m.sizes.push_back(bytes);
        m.busbw.push_back(100 * gain);
        m.time_us.push_back(static_cast<double>(bytes) / (100 * gain * 1e3));
        m.nccl_choices.push_back(NcclChoice{"Ring", "Simple"});  // what a list must keep to ship
      }
    return m;
  };
}

SearchSpace gdr_and_list_space() {
  Result<SearchSpace> space = parse_search_space(
      "schema: nccltune/search-space/v1\n"
      "knobs:\n"
      "  - {name: NCCL_NET_GDR_LEVEL, values: [SYS]}\n"
      "  - {name: NCCL_ALGO, scope: comm, values: [\"Ring,Tree\"]}\n",
      "space.yaml");
  EXPECT_TRUE(space.ok()) << space.error();
  return space.ok() ? *space : SearchSpace{};
}

TEST(StrategyModels, AListThatGivesNothingOverTheRestOfTheWinnerDoesNotShip) {
  // Screening sees the list +5% (a list can look good on few sizes and iterations), halving
  // keeps GDR=SYS with it by a hair, and in the confirmation the list gives nothing: the same
  // env without it runs in every round, and only that ships.
  std::vector<TrialRequest> seen;
  const TrialExecutor execute = gains_executor(
      {{TrialPhase::screen, 1.05}, {TrialPhase::cross, 1.05}, {TrialPhase::halving, 1.002}}, &seen);
  const StrategyResult r = run_strategy(gdr_and_list_space(), StrategyOptions{}, execute);
  EXPECT_EQ(r.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}})) << r.confirmation;
  EXPECT_NE(r.confirmation.find("not shipped"), std::string::npos) << r.confirmation;
  int with_list = 0, without = 0;
  for (const TrialRequest& request : seen) {
    if (request.phase != TrialPhase::confirm) continue;
    with_list += request.env == Env({{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring,Tree"}});
    without += request.env == Env({{"NCCL_NET_GDR_LEVEL", "SYS"}});
  }
  EXPECT_EQ(with_list, StrategyOptions{}.confirm_rounds);
  EXPECT_EQ(without, StrategyOptions{}.confirm_rounds);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("NCCL_ALGO"), std::string::npos) << r.notes.back();
}

TEST(StrategyModels, AListThatGivesMoreThanTheRestOfTheWinnerShipsWithIt) {
  const TrialExecutor execute = gains_executor({{TrialPhase::screen, 1.05},
                                                {TrialPhase::cross, 1.05},
                                                {TrialPhase::halving, 1.05},
                                                {TrialPhase::confirm, 1.05}},
                                               nullptr);
  const StrategyResult r = run_strategy(gdr_and_list_space(), StrategyOptions{}, execute);
  EXPECT_EQ(r.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring,Tree"}})) << r.confirmation;
  EXPECT_NE(r.confirmation.find("confirmed"), std::string::npos) << r.confirmation;
  EXPECT_EQ(r.confirmation.find("not shipped"), std::string::npos) << r.confirmation;
}

// ---- budget, trial limit, broken defaults -----------------------------------------------------

TEST(StrategyBudget, TinyBudgetStillGivesAValidResultWithFewerTrials) {
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  const ModelRun full = run_model(model);
  StrategyOptions options;
  options.budget = std::chrono::seconds(3);  // the full run takes about 4.5 simulated seconds
  const ModelRun tiny = run_model(model, options);
  const StrategyResult& r = tiny.result;
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_LT(r.trials, full.result.trials);
  EXPECT_GT(full.simulated_s, 3.0);
  EXPECT_LE(tiny.simulated_s, 3.0 + 1e-9);
  if (r.keep_defaults) {
    EXPECT_TRUE(r.env.empty());
  } else {
    EXPECT_NE(r.confirmation.find("confirmed"), std::string::npos) << r.confirmation;
    EXPECT_GT(tiny.objective, 1.0);
  }
  EXPECT_EQ(r.sizes, final_sizes());
  EXPECT_EQ(r.baseline_busbw.size(), r.sizes.size());
  EXPECT_EQ(r.tuned_busbw.size(), r.sizes.size());
}

TEST(StrategyBudget, BudgetSmallerThanTheConfirmationStillFinishes) {
  const fake::FakeModel model = load_model("tune-one-knob.yaml");
  StrategyOptions options;
  options.budget = std::chrono::seconds(1);
  const ModelRun run = run_model(model, options);
  EXPECT_TRUE(run.result.error.empty()) << run.result.error;
  EXPECT_TRUE(run.result.keep_defaults || !run.result.env.empty());
  EXPECT_EQ(run.result.baseline_busbw.size(), final_sizes().size());
  EXPECT_LE(run.result.trials, options.baseline_repeats + 2 * options.confirm_rounds + 1);
}

TEST(StrategyBudget, MaxTrialsIsRespected) {
  const fake::FakeModel model = load_model("tune-three-knobs.yaml");
  for (int max_trials : {12, 20, 40}) {
    StrategyOptions options;
    options.max_trials = max_trials;
    const ModelRun run = run_model(model, options);
    EXPECT_LE(run.result.trials, max_trials);
    EXPECT_TRUE(run.result.error.empty());
    EXPECT_EQ(run.result.keep_defaults, run.result.env.empty());
    EXPECT_GE(run.objective, 1.0) << describe_env(run.result.env);
  }
}

TEST(StrategyBudget, PerSizeIsLeftEmptyWhenThePairsUnderTheChosenEnvDoNotFit) {
  // A trial limit with no room for the pairs under GDR=SYS: none of them is spent in vain (a
  // cross is run whole or not at all), and per_size stays empty, since the choices measured
  // without GDR=SYS are not for its env and a choice among some pairs could be slower than one
  // never measured.
  const fake::FakeModel model = variant({effect({{"NCCL_NET_GDR_LEVEL", {"SYS"}}}, 2.5)});
  const RecordedRun full = run_recorded(model);
  const std::size_t pairs = pairs_that_ran(full).size();
  ASSERT_EQ(full.envs_of(TrialPhase::per_size).size(), pairs);
  int did_not_fit = 0;
  for (int max_trials = full.result.trials - 1; max_trials > full.result.trials - 12; --max_trials) {
    StrategyOptions options;
    options.max_trials = max_trials;
    const RecordedRun run = run_recorded(model, options);
    EXPECT_LE(run.result.trials, max_trials);
    const std::size_t measured = run.envs_of(TrialPhase::per_size).size();
    EXPECT_TRUE(measured == 0 || measured == pairs) << max_trials << ": " << measured << " of " << pairs;
    if (measured != 0 || run.result.env != Env({{"NCCL_NET_GDR_LEVEL", "SYS"}})) continue;
    ++did_not_fit;
    EXPECT_TRUE(run.result.per_size.empty()) << max_trials;
  }
  EXPECT_GT(did_not_fit, 0);
}

TEST(StrategyBudget, FailingDefaultsSetTheError) {
  fake::FakeModel model = load_model("tune-one-knob.yaml");
  model.faults.push_back(fake::Fault{{}, fake::FaultKind::crash, std::nullopt, 2});
  const ModelRun run = run_model(model);
  EXPECT_FALSE(run.result.error.empty());
  EXPECT_NE(run.result.error.find("crash"), std::string::npos) << run.result.error;
  EXPECT_EQ(run.result.trials, 1);
  EXPECT_TRUE(run.result.env.empty());

  fake::FakeModel hangs = load_model("tune-one-knob.yaml");
  hangs.faults.push_back(fake::Fault{{}, fake::FaultKind::hang, 5, 2});  // one rank is enough
  const ModelRun hung = run_model(hangs);
  EXPECT_NE(hung.result.error.find("timeout"), std::string::npos) << hung.result.error;
}

// ---- switches between the final grid's sizes ----------------------------------------

// The first size in (lo, hi] at which `above` is no slower than `below` in the model, noiseless,
// by bisection on the model's own times: where the switch truly belongs.
std::uint64_t model_switch_bytes(const fake::FakeModel& model, const NcclChoice& below,
                                 const NcclChoice& above, std::uint64_t lo, std::uint64_t hi) {
  const auto time_of = [&](const NcclChoice& pair, std::uint64_t bytes) {
    const auto point =
        model_point(model, {{"NCCL_ALGO", pair.algo}, {"NCCL_PROTO", pair.proto}}, kRanks, bytes);
    EXPECT_TRUE(point && point->algo == pair.algo && point->proto == pair.proto);
    return point ? point->time_us : 0.0;
  };
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (time_of(above, mid) <= time_of(below, mid) ? hi : lo) = mid;
  }
  return hi;
}

const SizeSwitch* all_reduce_switch(const StrategyResult& result, const std::string& below,
                                    const std::string& above) {
  const auto it = result.switches.find({kAllReduce});
  if (it == result.switches.end()) return nullptr;
  for (const SizeSwitch& s : it->second)
    if (s.below == below && s.above == above) return &s;
  return nullptr;
}

// The refinement's runs: per-size runs with sizes of their own.
std::vector<TrialRequest> refinement_runs(const RecordedRun& run) {
  std::vector<TrialRequest> runs;
  for (const TrialRequest& r : run.requests)
    if (r.phase == TrialPhase::per_size && !r.sizes.empty()) runs.push_back(r);
  return runs;
}

int pairs_of(const std::vector<TrialRequest>& runs) {
  int pairs = 0;
  for (const TrialRequest& r : runs) pairs += trial_count(r);
  return pairs;
}

constexpr const char* kOffGrid = "tune-off-grid-crossover.yaml";
const NcclChoice kTreeLL128Pair{"Tree", "LL128"}, kRingLL128Pair{"Ring", "LL128"},
    kRingSimplePair{"Ring", "Simple"};

TEST(StrategySwitches, PairModePutsTheSwitchWithin125OfTheModelsCrossingBetweenGridSizes) {
  // Tree/LL128 beats Ring/LL128 up to ~1.1 MiB (16 ranks), Ring/LL128 beats Ring/Simple up to
  // ~8.1M; the final grid measures 1M, 4M and 16M. Each switch is fitted, measured around in pair
  // mode, and recorded where the pairs cross, within a bracket of 1.25; per_size stays on the grid.
  const fake::FakeModel model = load_model(kOffGrid);
  const RecordedRun run = run_recorded(model, pair_mode_options());
  const StrategyResult& r = run.result;
  EXPECT_EQ(all_reduce_choices(r).size(), final_sizes().size());
  for (const auto& [below, above, lo, hi] :
       {std::tuple{kTreeLL128Pair, kRingLL128Pair, 1ull << 20, 4ull << 20},
        std::tuple{kRingLL128Pair, kRingSimplePair, 4ull << 20, 16ull << 20}}) {
    SCOPED_TRACE(below.algo + "/" + below.proto + " -> " + above.algo + "/" + above.proto);
    const SizeSwitch* s =
        all_reduce_switch(r, below.algo + "/" + below.proto, above.algo + "/" + above.proto);
    ASSERT_NE(s, nullptr);
    const auto truth = static_cast<double>(model_switch_bytes(model, below, above, lo, hi));
    RecordProperty("switch_" + below.algo + below.proto, std::to_string(s->bytes));
    EXPECT_EQ(s->fit, "crossing");
    EXPECT_GE(static_cast<double>(s->bytes), truth / kSettledRatio) << s->bytes << " against " << truth;
    EXPECT_LE(static_cast<double>(s->bytes), truth * kSettledRatio) << s->bytes << " against " << truth;
    // Inside the grid's gap, so that the profile's range of `above` starts there.
    EXPECT_GT(s->bytes, lo);
    EXPECT_LE(s->bytes, hi);
    EXPECT_GE(s->lo, lo);
    EXPECT_LE(s->hi, hi);
    EXPECT_LE(static_cast<double>(s->hi), kSettledRatio * static_cast<double>(s->lo))
        << s->lo << " " << s->hi;
    EXPECT_GT(s->below_gbps, 0);
    EXPECT_GT(s->above_gbps, s->below_gbps);  // the pair above wins on bandwidth
    EXPECT_LT(s->below_latency_us, s->above_latency_us);
  }
  // The refinement measured only the brackets' pairs, one run per iteration, at most three.
  const std::vector<TrialRequest> runs = refinement_runs(run);
  ASSERT_FALSE(runs.empty());
  EXPECT_LE(runs.size(), static_cast<std::size_t>(kRefinementIterations));
  for (const TrialRequest& request : runs) {
    EXPECT_EQ(request.env, r.env);
    EXPECT_EQ(request.iterations, StrategyOptions{}.final_iterations);
    EXPECT_EQ(std::count(request.pairs.begin(), request.pairs.end(), kNcclOwnChoice), 0);
  }
}

TEST(StrategySwitches, WithoutPairModeTheSwitchIsTheFinalGridsFitAndCostsNoTrial) {
  const fake::FakeModel model = load_model(kOffGrid);
  const RecordedRun run = run_recorded(model);
  EXPECT_TRUE(refinement_runs(run).empty());
  const SizeSwitch* s = all_reduce_switch(run.result, "Tree/LL128", "Ring/LL128");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->lo, 1u << 20);
  EXPECT_EQ(s->hi, 4u << 20);
  EXPECT_EQ(s->fit, "crossing");
  const auto truth =
      static_cast<double>(model_switch_bytes(model, kTreeLL128Pair, kRingLL128Pair, s->lo, s->hi));
  EXPECT_GE(static_cast<double>(s->bytes), truth / kSettledRatio) << s->bytes << " against " << truth;
  EXPECT_LE(static_cast<double>(s->bytes), truth * kSettledRatio) << s->bytes << " against " << truth;
}

TEST(StrategySwitches, AModelWhoseWinnerNeverChangesCostsNoRefinementRun) {
  // Ring/LL128 with the least latency and the most bandwidth wins at every size: no gap, no run.
  fake::FakeModel model = load_model(kOffGrid);
  model.algos.at("Ring").protos.at("LL128") = fake::ProtoCost{1, 200};
  const RecordedRun run = run_recorded(model, pair_mode_options());
  ASSERT_FALSE(all_reduce_choices(run.result).empty());
  for (const SizeChoice& choice : all_reduce_choices(run.result))
    EXPECT_EQ(choice.algo + "/" + choice.proto, "Ring/LL128") << choice.min_bytes;
  EXPECT_TRUE(refinement_runs(run).empty());
  EXPECT_TRUE(run.result.switches.empty());
}

TEST(StrategySwitches, TheTrialLimitStopsTheRefinementAndLeavesTheGridsFit) {
  // A limit one pair short of the first refinement run: everything before it runs as without the
  // limit, the refinement runs nothing, and each switch is the final grid's fit.
  const fake::FakeModel model = load_model(kOffGrid);
  const RecordedRun full = run_recorded(model, pair_mode_options());
  const std::vector<TrialRequest> runs = refinement_runs(full);
  ASSERT_FALSE(runs.empty());
  StrategyOptions options = pair_mode_options();
  const int reserve = 4 * options.confirm_rounds;  // what budget_left keeps for the confirmation
  options.max_trials = full.result.trials - pairs_of(runs) + reserve + trial_count(runs.front()) - 1;
  const RecordedRun capped = run_recorded(model, options);
  EXPECT_TRUE(capped.result.error.empty()) << capped.result.error;
  EXPECT_LE(capped.result.trials, options.max_trials);
  EXPECT_TRUE(refinement_runs(capped).empty());
  EXPECT_EQ(capped.result.per_size, full.result.per_size);
  const SizeSwitch* s = all_reduce_switch(capped.result, "Tree/LL128", "Ring/LL128");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->lo, 1u << 20);
  EXPECT_EQ(s->hi, 4u << 20);
  EXPECT_EQ(s->fit, "crossing");
}

}  // namespace
}  // namespace nccltune
