// The search's names per communicator shape, and the boundary that turns them into the worker's
// plain collectives and comms and back.
#include "search/comm_shapes.h"

#include <gtest/gtest.h>

namespace nccltune {
namespace {

using ShapeNames = std::vector<std::string>;

TEST(CommShapes, CommsParseInTheWorkersOrderAndAlwaysWithTheWorld) {
  const auto all = parse_comms("node,world,rail");
  ASSERT_TRUE(all) << all.error();
  EXPECT_EQ(*all, (ShapeNames{"world", "rail", "node"}));
  EXPECT_EQ(*parse_comms("world"), (ShapeNames{"world"}));
  EXPECT_EQ(parse_comms("rail").error(), "--comms: the world is always measured: add world");
  EXPECT_EQ(parse_comms("world,rails").error(), "--comms: 'rails' is not a communicator shape (world, rail, node)");
  EXPECT_EQ(parse_comms("world,node,node").error(), "--comms: node is named twice");
}

TEST(CommShapes, ASplitsNameCarriesItsShapeAndTheWorldsIsPlain) {
  EXPECT_EQ(shaped_collectives({"all_reduce", "alltoall"}, {"world", "rail"}),
            (ShapeNames{"all_reduce", "alltoall", "all_reduce@rail", "alltoall@rail"}));
  EXPECT_EQ(base_collective("all_gather@node"), "all_gather");
  EXPECT_EQ(collective_comm("all_gather@node"), "node");
  EXPECT_EQ(collective_comm("all_gather"), "world");
  EXPECT_EQ(base_collectives({"all_reduce", "all_gather", "all_reduce@rail"}),
            (ShapeNames{"all_reduce", "all_gather"}));
}

TEST(CommShapes, TheWorkerGetsPlainCollectivesAndCommsAndTheSearchGetsShapedPoints) {
  TrialRequest shaped;
  shaped.collectives = {"all_reduce", "all_reduce@node"};  // no rail: it is not asked for
  const TrialRequest plain = unshaped_request(shaped);
  EXPECT_EQ(plain.collectives, (ShapeNames{"all_reduce"}));
  EXPECT_EQ(plain.comms, (ShapeNames{"world", "node"}));

  TrialMeasurement m;  // the worker's order: communicator by communicator
  m.ops = {"all_reduce", "all_reduce", "all_reduce", "all_reduce"};
  m.comms = {"world", "world", "node", "node"};
  m.sizes = {1024, 2048, 1024, 2048};
  m.busbw = {1, 2, 3, 4};
  m.plugin_served = {1, 0, 1, 1};
  const TrialMeasurement back = shaped_measurement(m, shaped);
  EXPECT_EQ(back.ops, (ShapeNames{"all_reduce", "all_reduce", "all_reduce@node", "all_reduce@node"}));
  EXPECT_EQ(back.busbw, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(back.plugin_served, (std::vector<int>{1, 0, 1, 1}));

  // A request of all_gather on the world only, measured with all_reduce on every shape (a pair's
  // trial leaves collectives out alike on every shape): only what it names comes back.
  TrialRequest world_gather;
  world_gather.collectives = {"all_gather"};
  TrialMeasurement wide;
  wide.ops = {"all_gather", "all_gather"};
  wide.comms = {"world", "rail"};
  wide.sizes = {8, 8};
  wide.busbw = {5, 6};
  EXPECT_EQ(shaped_measurement(wide, world_gather).busbw, (std::vector<double>{5}));
}

}  // namespace
}  // namespace nccltune
