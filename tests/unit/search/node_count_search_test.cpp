// tune --node-counts' search (search/node_count_search.h) on a model whose best middle-size
// algorithm changes with the node count (tests/fixtures/models/node-crossover.yaml): each count
// gets its own choice, the transport winner of the largest count reaches the others, and the
// whole plan costs at most 1 + 0.5 (K - 1) times one count's trials.
#include "search/node_count_search.h"

#include <gtest/gtest.h>

#include "dgx_shape.h"
#include "model_executor.h"
#include "profile/nccl_names.h"
#include "search/default_search_space.h"
#include "search/shippable_env.h"

namespace nccltune {
namespace {

constexpr int kGpusPerNode = 2;

fake::FakeModel crossover_model() {
  Result<fake::FakeModel> model =
      fake::load_fake_model(std::string(NCCLTUNE_FIXTURES) + "/models/node-crossover.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : fake::FakeModel{};
}

SearchSpace space_for(int nodes) {
  Result<SearchSpace> parsed = parse_search_space(default_search_space_yaml(), "configs/search-space.yaml");
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  ShapeFacts facts = test_support::dgx_h100_facts(nodes);
  facts.gpus_per_node = kGpusPerNode;
  return parsed.ok() ? prune(*parsed, facts) : SearchSpace{};
}

struct Executors {
  fake::FakeModel model;
  std::map<int, std::unique_ptr<test_support::ModelExecutor>> by_count;
  TrialExecutor operator()(int nodes) {
    auto& executor = by_count[nodes];
    if (!executor)
      executor = std::make_unique<test_support::ModelExecutor>(model, kGpusPerNode * nodes, nodes);
    return executor->executor();
  }
  int trials() const {
    int total = 0;
    for (const auto& [nodes, executor] : by_count) total += executor->stats().trials;
    return total;
  }
};

StrategyOptions options_for(Executors& executors) {
  StrategyOptions options;
  options.final_grid = {8, 1u << 20, 4};
  options.screen_grid = {8, 1u << 20, 8};
  // One clock for the whole plan: the executors' simulated seconds together.
  options.clock_s = [&executors] {
    double total = 0;
    for (const auto& [nodes, executor] : executors.by_count) total += executor->stats().simulated_s;
    return total;
  };
  return options;
}

double grid_objective(const fake::FakeModel& model, int nodes, const Env& env,
                      const StrategyOptions& options) {
  return test_support::model_objective(fake::model_for_nodes(model, nodes), env, kGpusPerNode * nodes,
                                       grid_sizes(options.final_grid), options.objective, options.tolerance);
}

TEST(NodeCountSearch, EachCountGetsItsOwnBestChoiceAndTheTransportKnobReachesAll) {
  Executors executors{crossover_model(), {}};
  const StrategyOptions options = options_for(executors);
  NodeCountPlan plan{{8, 4, 2}, space_for, [&](int nodes) { return executors(nodes); }};
  const std::vector<NodeCountResult> results = run_node_count_plan(plan, options);
  ASSERT_EQ(results.size(), 3u);
  for (const NodeCountResult& r : results) {
    SCOPED_TRACE(std::to_string(r.nodes) + " nodes: " + describe_env(r.result.env) + "; " +
                 r.result.confirmation);
    ASSERT_TRUE(r.result.error.empty()) << r.result.error;
    EXPECT_EQ(r.result.env.count("NCCL_NET_GDR_LEVEL"), 1u);
    // Within 1% of that count's own grid optimum.
    const auto best = test_support::grid_best(
        fake::model_for_nodes(executors.model, r.nodes), space_for(r.nodes), kGpusPerNode * r.nodes,
        grid_sizes(options.final_grid), options.objective, options.tolerance);
    EXPECT_GE(grid_objective(executors.model, r.nodes, r.result.env, options), 0.99 * best.objective)
        << "grid best " << describe_env(best.env);
  }
  // 2 nodes: rings win the middle sizes NCCL gives trees there; 8 nodes: NCCL's trees stand.
  EXPECT_FALSE(env_allows(results[2].result.env, "NCCL_ALGO", "Tree", "all_reduce"))
      << describe_env(results[2].result.env);
  EXPECT_EQ(results[0].result.env, Env({{"NCCL_NET_GDR_LEVEL", "SYS"}})) << results[0].result.confirmation;
}

TEST(NodeCountSearch, SeveralCountsCostAtMostHalfAFullSearchEachAfterTheFirst) {
  Executors one{crossover_model(), {}};
  NodeCountPlan single{{8}, space_for, [&](int nodes) { return one(nodes); }};
  run_node_count_plan(single, options_for(one));
  Executors three{crossover_model(), {}};
  NodeCountPlan plan{{8, 4, 2}, space_for, [&](int nodes) { return three(nodes); }};
  run_node_count_plan(plan, options_for(three));
  std::string per_count;
  for (const auto& [nodes, executor] : three.by_count)
    per_count += " " + std::to_string(nodes) + ":" + std::to_string(executor->stats().trials);
  EXPECT_LE(three.trials(), (1 + 0.5 * 2) * one.trials())
      << three.trials() << " vs " << one.trials() << per_count;
}

TEST(NodeCountSearch, OnlyWhatIsNotSearchedPerCountIsCarried) {
  EXPECT_EQ(carried_settings({{"NCCL_NET_GDR_LEVEL", "SYS"},
                              {"NCCL_ALGO", "Ring"},
                              {"NCCL_MIN_NCHANNELS", "32"},
                              {"NCCL_NTHREADS", "256"}}),
            (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_NTHREADS", "256"}}));
  for (const Knob& knob : per_count_space(space_for(2)).knobs)
    EXPECT_TRUE(is_searched_per_node_count(knob.name)) << knob.name;
}

}  // namespace
}  // namespace nccltune
