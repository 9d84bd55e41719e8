// The strategy against a fake that chooses as NCCL does (nccl_model, ll128_default): what it ships
// must hold under NCCL's real chooser, never only under a kinder one.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "dgx_shape.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "search/default_search_space.h"
#include "search/search_space.h"
#include "search/strategy.h"

namespace nccltune {
namespace {

using test_support::kNodes;
using test_support::kRanks;
using test_support::model_point;
using test_support::ModelExecutor;


fake::FakeModel model_at_two_nodes(const std::string& text) {
  Result<fake::FakeModel> model = fake::parse_fake_model(text, "model.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? fake::model_for_nodes(*model, kNodes, kRanks / kNodes) : fake::FakeModel{};
}

StrategyResult tuned(const fake::FakeModel& model) {
  ModelExecutor executor(model, kRanks);
  StrategyOptions options;
  options.clock_s = executor.clock();
  return run_strategy(test_support::two_node_space(), options, executor.executor());
}

// At every size of the final grid the shipped env runs (no wrong data) and is not slower than NCCL's
// defaults beyond `tolerance`, with NCCL choosing as it does under that env.
void expect_never_slower(const fake::FakeModel& model, const Env& env, double tolerance) {
  for (const std::uint64_t bytes : test_support::final_sizes()) {
    const std::optional<test_support::ModelPoint> shipped = model_point(model, env, kRanks, bytes);
    const std::optional<test_support::ModelPoint> defaults = model_point(model, {}, kRanks, bytes);
    ASSERT_TRUE(shipped && defaults) << describe_env(env) << " at " << bytes;
    EXPECT_LE(shipped->time_us, defaults->time_us * (1 + tolerance))
        << describe_env(env) << " at " << bytes << ": " << shipped->algo << "/" << shipped->proto << " vs "
        << defaults->algo << "/" << defaults->proto;
  }
}

// NCCL's model underrates Tree/Simple (the hardware's fastest above ~1 MB) and rates Tree/LL128
// next among Tree's pairs: NCCL_ALGO=Tree makes NCCL run Tree/LL128 at large sizes, a loss, where
// a fake that ran the fastest allowed pair would have shown Tree/Simple's gain.
constexpr const char* kUnderratedTree = R"(schema: nccltune/fake-model/v1
channels: {default: 16}
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 200}, Simple: {lat_us: 20, busbw_gbps: 520}}
nccl_model:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 220}}
noise: {cv: 0.02, seed: 11}
)";

TEST(StrategyNcclRules, AListShipsOnlyWhereNcclsOwnChooserMakesItAGain) {
  const fake::FakeModel model = model_at_two_nodes(kUnderratedTree);
  // The trap: under NCCL_ALGO=Tree NCCL picks Tree/LL128 at 64 MB, slower than its Ring/Simple.
  const auto trap = model_point(model, {{"NCCL_ALGO", "Tree"}}, kRanks, 1 << 26);
  const auto defaults = model_point(model, {}, kRanks, 1 << 26);
  ASSERT_TRUE(trap && defaults);
  EXPECT_EQ(trap->algo + "/" + trap->proto, "Tree/LL128");
  EXPECT_GT(trap->time_us, defaults->time_us);
  const StrategyResult result = tuned(model);
  ASSERT_TRUE(result.error.empty()) << result.error;
  expect_never_slower(model, result.env, 0.02);
  // The gain is Tree/Simple at the large sizes, which only the tuner plugin can deliver.
  const auto per_size = result.per_size.find({kAllReduce});
  ASSERT_NE(per_size, result.per_size.end());
  EXPECT_EQ(per_size->second.back().algo + "/" + per_size->second.back().proto, "Tree/Simple");
}

// NCCL leaves LL128 off on this platform, and LL128 gives wrong data where it runs: any NCCL_PROTO
// that does not exclude LL128 turns it on (parseList), so the tune must never ship one.
constexpr const char* kUntrustedLl128 = R"(schema: nccltune/fake-model/v1
channels: {default: 16}
ll128_default: false
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 12, busbw_gbps: 340}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, Simple: {lat_us: 20, busbw_gbps: 300}}
nccl_model:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 12, busbw_gbps: 340}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, Simple: {lat_us: 20, busbw_gbps: 300}}
faults:
  - {when: {NCCL_PROTO: LL128}, fault: corrupt}
noise: {cv: 0.02, seed: 5}
)";

TEST(StrategyNcclRules, AProtoListThatTurnsLl128OnNeverShips) {
  const fake::FakeModel model = model_at_two_nodes(kUntrustedLl128);
  // NCCL's defaults never run LL128 here; NCCL_PROTO=^LL turns it on, and the data goes wrong.
  EXPECT_TRUE(model_point(model, {}, kRanks, 1 << 20).has_value());
  EXPECT_FALSE(model_point(model, {{"NCCL_PROTO", "^LL"}}, kRanks, 1 << 20).has_value());
  const StrategyResult result = tuned(model);
  ASSERT_TRUE(result.error.empty()) << result.error;
  expect_never_slower(model, result.env, 0.02);
  for (const std::uint64_t bytes : test_support::final_sizes()) {
    const auto shipped = model_point(model, result.env, kRanks, bytes);
    ASSERT_TRUE(shipped) << describe_env(result.env) << " gives wrong data at " << bytes;
    EXPECT_NE(shipped->proto, "LL128") << describe_env(result.env);
  }
  const auto per_size = result.per_size.find({kAllReduce});
  if (per_size != result.per_size.end()) {
    for (const SizeChoice& choice : per_size->second) EXPECT_NE(choice.proto, "LL128") << choice.min_bytes;
  }
}

// A model whose hardware would run NVLS six times faster than Ring: on 2 nodes NCCL never runs it
// (no CollNet), so no setting and no per-size choice of the profile may name it.
constexpr const char* kNvlsSixTimes = R"(schema: nccltune/fake-model/v1
channels: {default: 16}
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 300}}
  NVLS: {Simple: {lat_us: 5, busbw_gbps: 2160}}
nccl_model:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 300}}
  NVLS: {Simple: {lat_us: 5, busbw_gbps: 2160}}
noise: {cv: 0.02, seed: 3}
)";

TEST(StrategyNcclRules, NvlsNeverReachesATwoNodeProfile) {
  const fake::FakeModel model = model_at_two_nodes(kNvlsSixTimes);
  EXPECT_FALSE(model_point(model, {{"NCCL_ALGO", "NVLS"}}, kRanks, 1 << 26).has_value()) << "no pair on 2 nodes";
  const StrategyResult result = tuned(model);
  ASSERT_TRUE(result.error.empty()) << result.error;
  for (const auto& [name, value] : result.env) EXPECT_EQ(value.find("NVLS"), std::string::npos) << name << "=" << value;
  for (const auto& [op, choices] : result.per_size)
    for (const SizeChoice& choice : choices)
      EXPECT_NE(choice.algo, "NVLS") << op.collective << " " << choice.min_bytes;
  expect_never_slower(model, result.env, 0.02);
}

}  // namespace
}  // namespace nccltune
