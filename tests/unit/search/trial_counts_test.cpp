// How a tune's counts add up (search/trial_counts.h): env trials, pairs measured in a
// communicator and failed configs, each what it says, and the strategy's own counts held against
// the requests its executor answered: the summary's failed count is its `failed` list.
#include "search/trial_counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "dgx_shape.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "search/default_search_space.h"
#include "search/strategy.h"

namespace nccltune {
namespace {

TrialRequest pair_mode_request(std::size_t pairs) {
  TrialRequest request;
  request.pairs.assign(1, kNcclOwnChoice);
  for (std::size_t i = 1; i < pairs; ++i) request.pairs.push_back({"Ring", "LL"});
  return request;
}

TrialMeasurement outcome_of(TrialOutcome outcome, bool cached = false) {
  TrialMeasurement m;
  m.outcome = outcome;
  m.cached = cached;
  return m;
}

const SearchSpace& counted_space() {
  static const SearchSpace space = [] {
    Result<SearchSpace> parsed = parse_search_space(default_search_space_yaml(), "configs/search-space.yaml");
    EXPECT_TRUE(parsed.ok()) << parsed.error();
    return parsed.ok() ? prune(*parsed, test_support::dgx_h100_facts(2, {"all_reduce"})) : SearchSpace{};
  }();
  return space;
}

}  // namespace

TEST(TrialCounts, ARunOfWorkersIsOneTrialAndAPairModeRunAddsItsPairs) {
  TrialCounts counts;
  count_trial(counts, TrialRequest{}, outcome_of(TrialOutcome::ok));
  count_trial(counts, TrialRequest{}, outcome_of(TrialOutcome::ok, true));
  count_trial(counts, TrialRequest{}, outcome_of(TrialOutcome::init_error));
  count_trial(counts, pair_mode_request(9), outcome_of(TrialOutcome::ok));
  // A pair-mode run that crashed measured no pair; it is one (failed) trial.
  count_trial(counts, pair_mode_request(9), outcome_of(TrialOutcome::crash));
  EXPECT_EQ(counts, (TrialCounts{5, 1, 9}));
  EXPECT_EQ(describe_trial_counts(counts, 2),
            "5 env trials (1 from the journal) and 9 pairs measured in a communicator, 2 failed configs");
  EXPECT_EQ(describe_trial_counts({1, 0, 0}, 1), "1 env trial, 1 failed config");
  EXPECT_EQ(describe_trial_counts({41, 0, 1}, 0),
            "41 env trials and 1 pair measured in a communicator, 0 failed configs");
}

TEST(TrialCounts, TheStrategysCountsAreTheRequestsItsExecutorAnswered) {
  // A model with faults, in pair mode: runs of env trials and of pairs, and configs that fail.
  const fake::FakeModel model = test_support::load_model("tune-faults.yaml");
  test_support::ModelExecutor executor(model, test_support::kRanks);
  StrategyOptions options;
  options.pair_mode = true;
  options.clock_s = executor.clock();
  const TrialExecutor measure = executor.executor();
  int runs = 0, pairs = 0, last_trial_line = 0;
  const StrategyResult r = run_strategy(
      counted_space(), options,
      [&](const TrialRequest& request) {
        TrialMeasurement m = measure(request);
        ++runs;
        if (m.outcome == TrialOutcome::ok) pairs += static_cast<int>(request.pairs.size());
        return m;
      },
      [&](const StrategyProgress& p, const TrialRequest&, const TrialMeasurement&) {
        last_trial_line = p.env_trial;
      });
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.counts.trials, runs);
  EXPECT_EQ(r.counts.pairs, pairs);
  EXPECT_GT(pairs, 0);
  EXPECT_EQ(last_trial_line, runs) << "the console's last trial line is the summary's count";
  // The budget's unit counts each pair: more than the trials whenever pairs ran in a communicator.
  EXPECT_GT(r.trials, r.counts.trials);
  // Each failed config is named once: the summary's failed count is the list's length.
  ASSERT_FALSE(r.failed.empty());
  std::set<std::pair<Env, TrialOutcome>> named;
  for (const FailedTrial& f : r.failed)
    EXPECT_TRUE(named.insert({f.env, f.outcome}).second) << describe_env(f.env);
}

}  // namespace nccltune
