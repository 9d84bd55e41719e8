// The strategy over several collectives at once, on the fake-GPU models made for it
// (tests/fixtures/models/collectives-*.yaml): a global knob that slows one collective does not
// ship, a protocol one collective wants ships scoped to it, and a guard that corrupts under the
// winner hands the profile to the next finalist. Objectives are the models' noiseless values.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dgx_shape.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "profile/nccl_names.h"
#include "search/default_search_space.h"
#include "search/search_space.h"
#include "search/shippable_env.h"
#include "search/strategy.h"

namespace nccltune {
namespace {

using test_support::final_sizes;
using test_support::kRanks;
using test_support::load_model;
using test_support::model_score;
using test_support::ModelExecutor;

const std::vector<std::string> kThree{"all_reduce", "all_gather", "reduce_scatter"};

// The default space pruned for 2 DGX-H100 nodes with no collective named: every knob some
// collective may want.
const SearchSpace& space_for_every_collective() {
  static const SearchSpace space = [] {
    Result<SearchSpace> parsed = parse_search_space(default_search_space_yaml(), "configs/search-space.yaml");
    EXPECT_TRUE(parsed.ok()) << parsed.error();
    return parsed.ok() ? prune(*parsed, test_support::dgx_h100_facts(2)) : SearchSpace{};
  }();
  return space;
}

StrategyResult run_collectives(const fake::FakeModel& model, const std::vector<std::string>& collectives,
                               const std::vector<std::string>& guards = {}, bool scoped_lists = true) {
  ModelExecutor executor(model, kRanks);
  StrategyOptions options;
  options.clock_s = executor.clock();
  options.collectives = collectives;
  options.guards = guards;
  options.scoped_lists = scoped_lists;
  return run_strategy(space_for_every_collective(), options, executor.executor());
}

// The noiseless speedup of `env` over the defaults for one collective, at its worst size.
double worst_ratio(const fake::FakeModel& model, const Env& env, const std::string& op) {
  const auto s = model_score(model, env, kRanks, final_sizes(), Objective::balanced, 0.02, {op});
  return s ? s->worst_ratio : 0;
}

TEST(StrategyCollectives, EveryTrialMeasuresEveryTunedCollective) {
  const fake::FakeModel model = load_model("collectives-rs-slowed.yaml");
  ModelExecutor executor(model, kRanks);
  StrategyOptions options;
  options.clock_s = executor.clock();
  options.collectives = kThree;
  options.guards = {"alltoall"};
  std::vector<TrialRequest> requests;
  const TrialExecutor recording = [&](const TrialRequest& r) {
    requests.push_back(r);
    return executor(r);
  };
  const StrategyResult r = run_strategy(space_for_every_collective(), options, recording);
  ASSERT_TRUE(r.error.empty()) << r.error;
  for (const TrialRequest& request : requests) {
    std::vector<std::string> expected = kThree;
    if (request.phase == TrialPhase::baseline || request.phase == TrialPhase::confirm)
      expected.push_back("alltoall");
    // A pair's env trial measures the collectives NCCL runs that pair for (Tree: all_reduce only).
    const auto algo = request.env.find("NCCL_ALGO");
    const auto proto = request.env.find("NCCL_PROTO");
    if (algo != request.env.end() && proto != request.env.end() && nccl_algorithm_index(algo->second) &&
        nccl_protocol_index(proto->second))
      std::erase_if(expected, [&](const std::string& op) {
        return !nccl_runs_pair_for(op, algo->second, proto->second);
      });
    EXPECT_EQ(request.collectives, expected) << to_string(request.phase) << " " << describe_env(request.env);
  }
  // The confirmation's points: the final grid for each collective, the guard's too.
  EXPECT_EQ(r.sizes.size(), 4 * final_sizes().size());
  EXPECT_EQ(std::count(r.ops.begin(), r.ops.end(), ShapedOp{"alltoall"}),
            static_cast<long>(final_sizes().size()));
  for (const std::string& op : kThree) EXPECT_EQ(r.per_size.count({op}), 1u) << op;
  EXPECT_EQ(r.per_size.count({"alltoall"}), 0u);
}

TEST(StrategyCollectives, AKnobThatSlowsReduceScatterDoesNotShip) {
  const fake::FakeModel model = load_model("collectives-rs-slowed.yaml");
  // Tuned on all_reduce alone, GDR=SYS is the winner...
  const StrategyResult alone = run_collectives(model, {"all_reduce"});
  ASSERT_TRUE(alone.error.empty()) << alone.error;
  EXPECT_EQ(alone.env.count("NCCL_NET_GDR_LEVEL"), 1u) << describe_env(alone.env);
  EXPECT_LT(worst_ratio(model, alone.env, "reduce_scatter"), 0.98);  // beyond the tolerance
  // ...and with the three collectives it is not: reduce_scatter keeps its speed at every size.
  const StrategyResult three = run_collectives(model, kThree, {"alltoall"});
  ASSERT_TRUE(three.error.empty()) << three.error;
  EXPECT_EQ(three.env.count("NCCL_NET_GDR_LEVEL"), 0u) << describe_env(three.env);
  EXPECT_EQ(three.env.count("NCCL_IB_QPS_PER_CONNECTION"), 1u) << describe_env(three.env);
  for (const std::string& op : kThree)
    EXPECT_GE(worst_ratio(model, three.env, op), 0.98) << op << " under " << describe_env(three.env);
}

TEST(StrategyCollectives, AChannelBoundThatSlowsReduceScatterDoesNotShipATransportKnobDoes) {
  // NCCL_MIN_NCHANNELS=32: all_reduce +15%, reduce_scatter -12%; GDR=SYS +10% for every collective.
  // No NCCL_ALGO/NCCL_PROTO list gains anything to hide the loss, whatever the noise draws.
  const fake::FakeModel model = load_model("collectives-channels-tradeoff.yaml");
  const auto at_largest = [&](const Env& env, const std::string& op) {
    const auto tuned = test_support::model_point(model, env, kRanks, final_sizes().back(), op);
    const auto own = test_support::model_point(model, {}, kRanks, final_sizes().back(), op);
    return tuned && own ? tuned->busbw / own->busbw : 0;
  };
  const Env thirty_two{{"NCCL_MIN_NCHANNELS", "32"}};
  EXPECT_GT(at_largest(thirty_two, "all_reduce"), 1.13);  // x1.15 bandwidth, latency aside
  EXPECT_LT(at_largest(thirty_two, "reduce_scatter"), 0.90);
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    fake::FakeModel seeded = model;
    seeded.noise.seed += 7919 * seed;
    const StrategyResult r = run_collectives(seeded, kThree, {"alltoall"});
    ASSERT_TRUE(r.error.empty()) << r.error;
    // A fake NCCL that ran the fastest allowed pair under any list shipped
    // NCCL_ALGO=NVLS,Ring,Tree NCCL_PROTO=LL,LL128,Simple with GDR=SYS here ("+14.2%").
    EXPECT_EQ(r.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}})) << r.confirmation;
    for (const std::string& op : kThree)
      EXPECT_GE(worst_ratio(model, r.env, op), 0.98) << op << " under " << describe_env(r.env);
  }
}

TEST(StrategyCollectives, AProtocolOnlyAllGatherWantsShipsScopedToIt) {
  const fake::FakeModel model = load_model("collectives-allgather-proto.yaml");
  const StrategyResult r = run_collectives(model, kThree, {"alltoall"});
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.env.count("NCCL_PROTO"), 1u) << describe_env(r.env) << "; " << r.confirmation;
  const std::string& proto = r.env.at("NCCL_PROTO");
  EXPECT_NE(proto.find("allgather:LL128,Simple"), std::string::npos) << proto;
  // all_gather loses LL; all_reduce keeps it (it is the fastest there below 128K).
  EXPECT_FALSE(env_allows(r.env, "NCCL_PROTO", "LL", "all_gather")) << proto;
  EXPECT_TRUE(env_allows(r.env, "NCCL_PROTO", "LL", "all_reduce")) << proto;
  EXPECT_GT(worst_ratio(model, r.env, "all_gather"), 1.0);
  for (const std::string& op : kThree) EXPECT_GE(worst_ratio(model, r.env, op), 0.98) << op;
  // all_gather's own per-size choices never name LL.
  for (const SizeChoice& c : r.per_size.at({"all_gather"})) EXPECT_NE(c.proto, "LL") << c.min_bytes;

  // An NCCL older than 2.24 takes one list for every collective: nothing all_reduce needs is lost.
  const StrategyResult old = run_collectives(model, kThree, {"alltoall"}, false);
  ASSERT_TRUE(old.error.empty()) << old.error;
  if (old.env.count("NCCL_PROTO")) {
    EXPECT_EQ(old.env.at("NCCL_PROTO").find(':'), std::string::npos);
  }
  for (const std::string& op : kThree) EXPECT_GE(worst_ratio(model, old.env, op), 0.98) << op;
}

TEST(StrategyCollectives, AGuardThatCorruptsUnderTheWinnerHandsOverToTheNextFinalist) {
  const fake::FakeModel model = load_model("collectives-alltoall-corrupt.yaml");
  const StrategyResult r = run_collectives(model, kThree, {"alltoall"});
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.env.count("NCCL_IB_QPS_PER_CONNECTION"), 0u) << describe_env(r.env);
  EXPECT_EQ(r.env.count("NCCL_NET_GDR_LEVEL"), 1u) << describe_env(r.env) << "; " << r.confirmation;
  const bool corrupt_seen = std::any_of(r.failed.begin(), r.failed.end(), [](const FailedTrial& f) {
    return f.outcome == TrialOutcome::wrong_data && f.env.count("NCCL_IB_QPS_PER_CONNECTION");
  });
  EXPECT_TRUE(corrupt_seen);
}

TEST(StrategyCollectives, ThreeCollectivesCostFewTrialsMoreThanAllReduceAlone) {
  for (const char* name : {"collectives-rs-slowed.yaml", "collectives-allgather-proto.yaml"}) {
    const fake::FakeModel model = load_model(name);
    const StrategyResult alone = run_collectives(model, {"all_reduce"});
    const StrategyResult three = run_collectives(model, kThree, {"alltoall"});
    EXPECT_LE(three.trials, 1.5 * alone.trials) << name << ": " << three.trials << " vs " << alone.trials;
  }
}

}  // namespace
}  // namespace nccltune
