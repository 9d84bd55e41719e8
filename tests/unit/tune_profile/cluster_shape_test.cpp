#include "tune_profile/cluster_shape.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nccltune
