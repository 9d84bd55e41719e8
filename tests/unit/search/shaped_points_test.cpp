// Each point of a trial is a collective on a communicator (profile/comm_shape.h's ShapedOp): the
// worker gets plain collectives and comms, and the strategy scores and chooses per shape.
#include <gtest/gtest.h>

#include <algorithm>

#include "search/strategy.h"

namespace nccltune {
namespace {

TEST(ShapedPoints, APointIsItsCollectiveOnTheCommunicatorItRanOn) {
  TrialMeasurement m;  // the worker's order: communicator by communicator
  m.ops = {"all_reduce", "all_gather", "all_reduce", "all_gather"};
  m.comms = {"world", "world", "node", "node"};
  EXPECT_EQ(
      point_ops(m),
      (std::vector<ShapedOp>{
          {"all_reduce"}, {"all_gather"}, {"all_reduce", CommRole::node}, {"all_gather", CommRole::node}}));
  m.comms.clear();  // a trial of the world alone names no communicator
  EXPECT_EQ(point_op(m, 2), ShapedOp{"all_reduce"});
}

// NCCL_ALGO x NCCL_PROTO as the only knobs; the world is fastest with Tree/LL at every size, the
// rails with Ring/LL128: each point's time from the pair the request's env forces.
SearchSpace algo_proto_space() {
  SearchSpace space;
  space.knobs.push_back({"NCCL_ALGO", {"Ring", "Tree"}, std::nullopt, {}, KnobScope::process, 1, {}, {}, {}});
  space.knobs.push_back({"NCCL_PROTO", {"LL", "LL128"}, std::nullopt, {}, KnobScope::process, 2, {}, {}, {}});
  return space;
}

TrialMeasurement shaped_answer(const TrialRequest& r) {
  const auto value = [&](const char* name) {
    const auto it = r.env.find(name);
    return it == r.env.end() ? std::string() : it->second;
  };
  TrialMeasurement m;
  for (const std::string& comm : r.comms)
    for (const std::string& op : r.collectives)
      for (const std::uint64_t bytes : grid_sizes(r.grid)) {
        const std::string pair = value("NCCL_ALGO") + "/" + value("NCCL_PROTO");
        const bool best = pair == (comm == "rail" ? "Ring/LL128" : "Tree/LL");
        m.ops.push_back(op);
        if (r.comms.size() > 1) m.comms.push_back(comm);
        m.sizes.push_back(bytes);
        m.time_us.push_back(best ? 10 : 20);
        m.busbw.push_back(best ? 2 : 1);
      }
  return m;
}

TEST(ShapedPoints, TheStrategyAsksForEveryCommAndChoosesPerShape) {
  StrategyOptions options;
  options.comms = {CommRole::world, CommRole::rail};
  options.max_trials = 200;
  bool every_request_has_both = true;
  const TrialExecutor execute = [&](const TrialRequest& r) {
    every_request_has_both = every_request_has_both && r.comms == std::vector<std::string>{"world", "rail"};
    return shaped_answer(r);
  };
  const StrategyResult result = run_strategy(algo_proto_space(), options, execute);
  ASSERT_TRUE(result.error.empty()) << result.error;
  EXPECT_TRUE(every_request_has_both);
  EXPECT_NE(std::find(result.ops.begin(), result.ops.end(), ShapedOp{kAllReduce, CommRole::rail}),
            result.ops.end());
  const auto world = result.per_size.find({kAllReduce});
  const auto rail = result.per_size.find({kAllReduce, CommRole::rail});
  ASSERT_NE(world, result.per_size.end());
  ASSERT_NE(rail, result.per_size.end());
  for (const SizeChoice& c : world->second) EXPECT_EQ(c.algo + "/" + c.proto, "Tree/LL") << c.min_bytes;
  for (const SizeChoice& c : rail->second) EXPECT_EQ(c.algo + "/" + c.proto, "Ring/LL128") << c.min_bytes;
}

}  // namespace
}  // namespace nccltune
