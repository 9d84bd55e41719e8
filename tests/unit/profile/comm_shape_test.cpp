// The one vocabulary of communicator shapes: the roles and their names, `--comms`, a role's shape
// in a job, how a shape is said, and a collective on a role as a key.
#include "profile/comm_shape.h"

#include <gtest/gtest.h>

#include <map>

namespace nccltune {
namespace {

using CommNames = std::vector<std::string>;

TEST(CommShape, RolesHaveOneNameEach) {
  for (const CommRole role : kCommRoles) EXPECT_EQ(parse_comm_role(to_string(role)), role);
  EXPECT_EQ(to_string(CommRole::rail), "rail");
  EXPECT_EQ(parse_comm_role("rails"), std::nullopt);
  EXPECT_EQ(parse_comm_role(""), std::nullopt);
}

TEST(CommShape, CommsParseInTheWorkersOrderAndAlwaysWithTheWorld) {
  const auto all = parse_comms("node,world,rail");
  ASSERT_TRUE(all) << all.error();
  EXPECT_EQ(*all, (CommNames{"world", "rail", "node"}));
  EXPECT_EQ(*parse_comms("world"), (CommNames{"world"}));
  EXPECT_EQ(parse_comms("rail").error(), "--comms: the world is always measured: add world");
  EXPECT_EQ(parse_comms("world,rails").error(),
            "--comms: 'rails' is not a communicator shape (world, rail, node)");
  EXPECT_EQ(parse_comms("world,node,node").error(), "--comms: node is named twice");
}

TEST(CommShape, NamesAndRolesConvertInTheWorkersOrder) {
  EXPECT_EQ(comm_roles({"node", "world", "nodes"}), (std::vector<CommRole>{CommRole::world, CommRole::node}));
  EXPECT_EQ(comm_names({CommRole::node, CommRole::rail}), (CommNames{"rail", "node"}));
  EXPECT_EQ(comm_names(comm_roles({"world", "rail", "node"})), (CommNames{"world", "rail", "node"}));
}

TEST(CommShape, ARailHasOneRankPerNodeAndANodeOneNode) {
  EXPECT_EQ(shape_in(CommRole::world, 2, 4), (Shape{CommRole::world, 2, 4}));
  EXPECT_EQ(shape_in(CommRole::rail, 2, 4), (Shape{CommRole::rail, 2, 1}));
  EXPECT_EQ(shape_in(CommRole::node, 2, 4), (Shape{CommRole::node, 1, 4}));
}

TEST(CommShape, AShapeIsSaidAsASectionOrBriefly) {
  EXPECT_EQ(describe_shape({CommRole::rail, 2, 1}), "rail: 2 nodes x 1 rank");
  EXPECT_EQ(describe_shape({CommRole::node, 1, 8}), "node: 1 node x 8 ranks");
  EXPECT_EQ(describe_shape({CommRole::world, 2, 4}, ShapeWords::brief), "world (2 nodes x 4)");
  EXPECT_EQ(describe_shape({CommRole::rail, 2, 1}, ShapeWords::brief), "rail (2 nodes x 1)");
  EXPECT_EQ(describe_shape({CommRole::node, 1, 4}, ShapeWords::brief), "node (1 node x 4)");
}

TEST(CommShape, AShapedOpKeysAMapByCollectiveThenTheWorldThenRolesByName) {
  std::map<ShapedOp, int> by_op;
  by_op[{"all_reduce", CommRole::rail}] = 3;
  by_op[{"all_reduce", CommRole::world}] = 1;
  by_op[{"all_gather", CommRole::rail}] = 0;
  by_op[{"all_reduce", CommRole::node}] = 2;
  by_op[{"reduce_scatter", CommRole::world}] = 5;
  by_op[{"reduce", CommRole::rail}] = 4;
  std::vector<int> order;
  for (const auto& [op, value] : by_op) order.push_back(value);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ShapedOp{"all_reduce"}, (ShapedOp{"all_reduce", CommRole::world}));
  EXPECT_NE(ShapedOp{"all_reduce"}, (ShapedOp{"all_reduce", CommRole::rail}));
}

}  // namespace
}  // namespace nccltune
