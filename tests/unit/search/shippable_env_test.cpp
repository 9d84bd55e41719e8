// A profile's NCCL_ALGO / NCCL_PROTO lists apply to every size of every job: they ship only when
// they keep what NCCL's defaults use at the largest measured size, and Simple unless 256 MiB or
// more were measured (search/shippable_env.h). The strategy confirms and ships only what may ship.
#include "search/shippable_env.h"

#include <gtest/gtest.h>

#include "dgx_shape.h"
#include "fake_model.h"
#include "model_executor.h"
#include "search/default_search_space.h"
#include "search/strategy.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::test_support;

namespace {

constexpr std::uint64_t kOneMiB = std::uint64_t{1} << 20;

ShipFacts at(std::uint64_t largest, const std::string& algo, const std::string& proto) {
  ShipFacts facts;
  facts.largest_measured = largest;
  facts.default_at_largest[kAllReduce] = NcclChoice{algo, proto};
  return facts;
}

}  // namespace

TEST(ShippableEnv, KeepsListsThatKeepNcclsChoiceAndSimple) {
  const Env env{
      {"NCCL_ALGO", "NVLS,Ring,Tree"}, {"NCCL_PROTO", "LL,LL128,Simple"}, {"NCCL_MIN_NCHANNELS", "32"}};
  const ShippableEnv shipped = shippable_env(env, at(64 * kOneMiB, "Ring", "Simple"));
  EXPECT_EQ(shipped.env, env);
  EXPECT_TRUE(shipped.notes.empty());
}

TEST(ShippableEnv, OnNccl224AListMustLeaveRingToEveryCollectiveNotTuned) {
  // Tuned: all_gather, where NCCL's own choice at the largest size was NVLS and PAT was faster.
  ShipFacts facts;
  facts.largest_measured = kOneMiB << 10;
  facts.collectives = {"all_gather"};
  facts.default_at_largest["all_gather"] = NcclChoice{"NVLS", "Simple"};
  const Env plain{{"NCCL_ALGO", "NVLS,PAT"}};
  EXPECT_EQ(shippable_env(plain, facts).env, plain);  // before 2.24 NCCL falls back to Ring
  facts.empty_filter_fails = true;
  const ShippableEnv shipped = shippable_env(plain, facts);
  EXPECT_TRUE(shipped.env.empty());
  ASSERT_EQ(shipped.notes.size(), 1u);
  EXPECT_NE(shipped.notes[0].find("leaves broadcast, which was not tuned, without Ring"), std::string::npos)
      << shipped.notes[0];
  for (const Env& safe : {Env{{"NCCL_ALGO", "allgather:NVLS,PAT"}}, Env{{"NCCL_ALGO", "NVLS,PAT,Ring"}},
                          Env{{"NCCL_ALGO", "^Tree"}}})
    EXPECT_EQ(shippable_env(safe, facts).env, safe) << safe.begin()->second;
}

TEST(ShippableEnv, ProtocolListWithoutSimpleStaysOutBelow256MiB) {
  const Env env{{"NCCL_PROTO", "LL,LL128"}, {"NCCL_NET_GDR_LEVEL", "SYS"}};
  const ShippableEnv shipped = shippable_env(env, at(kOneMiB, "Ring", "LL128"));
  EXPECT_EQ(shipped.env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  ASSERT_EQ(shipped.notes.size(), 1u);
  EXPECT_NE(shipped.notes[0].find("NCCL_PROTO=LL,LL128"), std::string::npos) << shipped.notes[0];
  EXPECT_NE(shipped.notes[0].find("removes Simple"), std::string::npos) << shipped.notes[0];
  EXPECT_NE(shipped.notes[0].find("per_size"), std::string::npos) << shipped.notes[0];
  // Measured to 256 MiB and NCCL already off Simple there: the list may drop it.
  EXPECT_EQ(shippable_env(env, at(256 * kOneMiB, "Ring", "LL128")).env, env);
}

TEST(ShippableEnv, AListThatDropsNcclsOwnChoiceAtTheLargestSizeStaysOut) {
  const Env env{{"NCCL_ALGO", "Ring,Tree"}};
  const ShippableEnv shipped = shippable_env(env, at(kOneMiB << 10, "NVLS", "Simple"));
  EXPECT_TRUE(shipped.env.empty());
  ASSERT_EQ(shipped.notes.size(), 1u);
  EXPECT_NE(shipped.notes[0].find("removes NVLS"), std::string::npos) << shipped.notes[0];
  // An exclusion is a list too.
  EXPECT_TRUE(shippable_env({{"NCCL_ALGO", "^NVLS"}}, at(kOneMiB << 10, "NVLS", "Simple")).env.empty());
  EXPECT_FALSE(shippable_env({{"NCCL_ALGO", "^PAT"}}, at(kOneMiB << 10, "NVLS", "Simple")).env.empty());
}

TEST(ShippableEnv, UnknownNcclChoiceShipsNoList) {
  const Env env{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}, {"NCCL_BUFFSIZE", "8388608"}};
  ShipFacts facts;
  facts.largest_measured = kOneMiB << 10;
  const ShippableEnv shipped = shippable_env(env, facts);
  EXPECT_EQ(shipped.env, (Env{{"NCCL_BUFFSIZE", "8388608"}}));
  EXPECT_EQ(shipped.notes.size(), 2u);
}

TEST(ShippableEnv, AListMustKeepWhatEveryTunedCollectiveUsesByDefault) {
  // all_gather's defaults use LL128 at the largest size: a global NCCL_PROTO without it would make
  // all_gather slower beyond the measured sizes, whatever all_reduce uses.
  ShipFacts facts = at(kOneMiB << 10, "Ring", "Simple");
  facts.collectives = {"all_reduce", "all_gather"};
  facts.default_at_largest["all_gather"] = NcclChoice{"Ring", "LL128"};
  const ShippableEnv shipped = shippable_env({{"NCCL_PROTO", "LL,Simple"}}, facts);
  EXPECT_TRUE(shipped.env.empty());
  ASSERT_EQ(shipped.notes.size(), 1u);
  EXPECT_NE(shipped.notes[0].find("LL128, which NCCL's defaults use for all_gather"), std::string::npos)
      << shipped.notes[0];
  EXPECT_FALSE(shippable_env({{"NCCL_PROTO", "LL128,Simple"}}, facts).env.empty());
  // A collective whose own choice is unknown: nothing can be shown to be kept.
  facts.collectives.push_back("reduce_scatter");
  EXPECT_TRUE(shippable_env({{"NCCL_PROTO", "LL128,Simple"}}, facts).env.empty());
}

TEST(ShippableEnv, ATuneToOneMiBShipsNoProtocolListWithoutSimple) {
  // NCCL's defaults in this model go Ring/Simple above 64 KiB; up to 1 MiB the fastest pairs are
  // Tree/LL and Ring/LL128, so a list of the measured best would drop Simple: the derived
  // candidate keeps it (and NCCL's own pair at 1 MiB), and whatever ships allows it.
  Result<fake::FakeModel> model = fake::load_fake_model(fixture("models/tune-drops-simple.yaml").string());
  ASSERT_TRUE(model) << model.error();
  Result<SearchSpace> space = parse_search_space(default_search_space_yaml(), "configs/search-space.yaml");
  ASSERT_TRUE(space) << space.error();
  ModelExecutor executor(*model, 16);
  StrategyOptions options;
  options.clock_s = executor.clock();
  options.screen_grid = {8, kOneMiB, 8};
  options.final_grid = {8, kOneMiB, 4};
  const StrategyResult result = run_strategy(prune(*space, dgx_h100_facts(2)), options, executor.executor());
  ASSERT_TRUE(result.error.empty()) << result.error;
  EXPECT_TRUE(env_allows(result.env, "NCCL_PROTO", "Simple")) << describe_env(result.env);
  EXPECT_TRUE(env_allows(result.env, "NCCL_ALGO", "Ring")) << describe_env(result.env);
  ASSERT_EQ(result.per_size.count({kAllReduce}), 1u);
  const std::vector<SizeChoice>& per_size = result.per_size.at({kAllReduce});
  ASSERT_FALSE(per_size.empty());
  EXPECT_LE(per_size.back().max_bytes, kOneMiB);
  // The pairs that were fastest are still the profile's per-size choices.
  EXPECT_EQ(per_size.front().algo, "Tree");
  EXPECT_EQ(per_size.back().proto, "LL128");
}

TEST(ShippableEnv, WhenNothingFasterMayShipTheDefaultsStayAndTheConfirmationSaysWhy) {
  // Only NCCL_PROTO to search: every faster value drops Simple, so none may ship in env. The
  // profile keeps NCCL's defaults and says it is not because nothing was faster.
  Result<fake::FakeModel> model = fake::load_fake_model(fixture("models/tune-drops-simple.yaml").string());
  ASSERT_TRUE(model) << model.error();
  Result<SearchSpace> space = parse_search_space(
      "schema: nccltune/search-space/v1\nknobs:\n  - {name: NCCL_PROTO, values: [LL, LL128, Simple], scope: "
      "comm}\n",
      "space.yaml");
  ASSERT_TRUE(space) << space.error();
  ModelExecutor executor(*model, 16);
  StrategyOptions options;
  options.clock_s = executor.clock();
  options.screen_grid = {8, kOneMiB, 8};
  options.final_grid = {8, kOneMiB, 4};
  const StrategyResult result = run_strategy(*space, options, executor.executor());
  ASSERT_TRUE(result.error.empty()) << result.error;
  EXPECT_TRUE(result.keep_defaults) << describe_env(result.env);
  EXPECT_TRUE(result.env.empty()) << describe_env(result.env);
  EXPECT_NE(result.confirmation.find("would restrict NCCL beyond them"), std::string::npos)
      << result.confirmation;
  ASSERT_FALSE(result.notes.empty());
  EXPECT_NE(result.notes[0].find("NCCL_PROTO="), std::string::npos) << result.notes[0];
}

TEST(ShippableEnv, NoListThatLetsNcclChooseAPairThatGaveWrongData) {
  const std::vector<FailedTrial> failed = {
      {{{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "LL128"}}, TrialOutcome::wrong_data, "12 wrong elements"},
      {{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL"}}, TrialOutcome::timeout, "hung"},  // not corrupt
      {{{"NCCL_ALGO", "Ring,Tree"}, {"NCCL_PROTO", "LL"}},
       TrialOutcome::wrong_data,
       "3 wrong"},                                                     // no one pair
      {{{"NCCL_PROTO", "LL"}}, TrialOutcome::wrong_data, "5 wrong"}};  // no algorithm
  ShipFacts facts = at(kOneMiB << 10, "Ring", "Simple");
  facts.corrupt_pairs = corrupt_pairs(failed);
  ASSERT_EQ(facts.corrupt_pairs, (std::vector<NcclChoice>{{"Tree", "LL128"}}));

  const Env lists{{"NCCL_ALGO", "Ring,Tree"}, {"NCCL_PROTO", "LL128,Simple"}, {"NCCL_MIN_NCHANNELS", "32"}};
  const ShippableEnv shipped = shippable_env(lists, facts);
  EXPECT_EQ(shipped.env, (Env{{"NCCL_MIN_NCHANNELS", "32"}}));
  ASSERT_EQ(shipped.notes.size(), 2u);
  EXPECT_NE(
      shipped.notes[0].find("it lets NCCL choose Tree/LL128, which gave wrong data when a trial forced it"),
      std::string::npos)
      << shipped.notes[0];
  // A list that rules the pair out ships.
  const Env no_tree{{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "LL128,Simple"}};
  EXPECT_EQ(shippable_env(no_tree, facts).env, no_tree);
}
