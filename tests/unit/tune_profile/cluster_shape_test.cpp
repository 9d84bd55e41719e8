#include "tune_profile/cluster_shape.h"

#include <gtest/gtest.h>

#include "search/nccl_acts.h"

namespace nccltune {
namespace {

TEST(RankPerGpu, AgreeingCountsAndNodesWithoutVisibleGpusPass) {
  EXPECT_FALSE(rank_per_gpu_problem("node1", 8, 8, 2));
  EXPECT_FALSE(rank_per_gpu_problem("node1", 0, 4, 2));  // no GPU seen: the ranks stand for them
}

TEST(RankPerGpu, FewerRanksThanGpusSaysHowManyToRun) {
  const auto problem = rank_per_gpu_problem("node1", 8, 4, 2);
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem,
            "node1: 4 rank(s) on a node with 8 GPUs; tune measures one rank per GPU, so run 8 ranks per node "
            "(mpirun -np 16, or --from a snapshot of the GPUs in use)");
  EXPECT_TRUE(rank_per_gpu_problem("node1", 4, 8, 1));  // more ranks than GPUs: shared GPUs
}

NodeType rdma_node(std::optional<bool> gdr) {
  NodeType type;
  type.gpu = "NVIDIA H100 80GB HBM3";
  type.gpus = 8;
  type.nics = 8;
  type.gdr = gdr;
  return type;
}

TEST(ClusterGdr, OneNodeWithGdrIsEnoughAndNoneNeedsEveryNodeToLackIt) {
  EXPECT_EQ(cluster_gdr({rdma_node(true), rdma_node(std::nullopt)}), true);
  EXPECT_EQ(cluster_gdr({rdma_node(false), rdma_node(true)}), true);
  EXPECT_EQ(cluster_gdr({rdma_node(false), rdma_node(false)}), false);
  EXPECT_EQ(cluster_gdr({rdma_node(false), rdma_node(std::nullopt)}), std::nullopt);
}

TEST(ClusterGdr, TheNodesGdrDecidesWhetherGdrKnobsAreSwept) {
  const auto facts_of = [](std::optional<bool> gdr) {
    auto shape = cluster_shape({rdma_node(gdr), rdma_node(gdr)}, {"a", "b"}, false);
    EXPECT_TRUE(shape) << shape.error();
    return shape_facts(*shape, 22809);
  };
  EXPECT_EQ(facts_of(true).gdr, true);
  EXPECT_FALSE(why_nccl_cannot_act("NCCL_NET_GDR_LEVEL", facts_of(true)));
  EXPECT_EQ(facts_of(false).gdr, false);
  const auto pruned = why_nccl_cannot_act("NCCL_NET_GDR_LEVEL", facts_of(false));
  ASSERT_TRUE(pruned);
  EXPECT_NE(pruned->find("GPUDirect RDMA"), std::string::npos) << *pruned;
  // Unknown explores, as before the topology said.
  EXPECT_EQ(facts_of(std::nullopt).gdr, std::nullopt);
  EXPECT_FALSE(why_nccl_cannot_act("NCCL_NET_GDR_READ", facts_of(std::nullopt)));
  // No RDMA NIC: no GDR, whatever a node's type says.
  NodeType socket = rdma_node(true);
  socket.nics = 0;
  auto shape = cluster_shape({socket, socket}, {"a", "b"}, false);
  ASSERT_TRUE(shape) << shape.error();
  EXPECT_EQ(shape_facts(*shape, 22809).gdr, false);
}

}  // namespace
}  // namespace nccltune
