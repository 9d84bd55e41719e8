// Node grouping of an MPI job (tuner/mpi_session.h, node_layout): real host names grouped in
// order of first appearance, whatever order the ranks come in, and NCCLTUNE_EMULATE_NODES
// blocks. The device a rank uses is its node-local rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpi_runtime/mpi_session.h"

using namespace nccltune;

namespace {

NodeLayout layout_of(const std::vector<std::string>& hosts, int rank, int emulate = 0) {
  Result<NodeLayout> layout = node_layout(hosts, rank, emulate);
  EXPECT_TRUE(layout.ok()) << layout.error();
  return layout.ok() ? *layout : NodeLayout{};
}

}  // namespace

TEST(NodeLayout, OneHost) {
  const std::vector<std::string> hosts(4, "node01");
  for (int rank = 0; rank < 4; ++rank) {
    const NodeLayout l = layout_of(hosts, rank);
    EXPECT_EQ(l.nodes, 1);
    EXPECT_EQ(l.node, 0);
    EXPECT_EQ(l.local_rank, rank);
    EXPECT_EQ(l.local_size, 4);
    EXPECT_EQ(l.hosts, std::vector<std::string>{"node01"});
    EXPECT_FALSE(l.emulated);
  }
}

TEST(NodeLayout, BlockHosts) {
  const std::vector<std::string> hosts = {"node01", "node01", "node02", "node02"};
  const int node[] = {0, 0, 1, 1}, local[] = {0, 1, 0, 1};
  for (int rank = 0; rank < 4; ++rank) {
    const NodeLayout l = layout_of(hosts, rank);
    EXPECT_EQ(l.nodes, 2);
    EXPECT_EQ(l.node, node[rank]) << "rank " << rank;
    EXPECT_EQ(l.local_rank, local[rank]) << "rank " << rank;
    EXPECT_EQ(l.local_size, 2);
    EXPECT_EQ(l.hosts, (std::vector<std::string>{"node01", "node02"}));
  }
}

TEST(NodeLayout, InterleavedHosts) {
  // mpirun --map-by node: ranks alternate between hosts; nodes are numbered in order of first
  // appearance and the local rank counts only the ranks of the same host below this one.
  const std::vector<std::string> hosts = {"nodeB", "nodeA", "nodeB", "nodeA", "nodeC", "nodeB"};
  const int node[] = {0, 1, 0, 1, 2, 0}, local[] = {0, 0, 1, 1, 0, 2}, local_size[] = {3, 2, 3, 2, 1, 3};
  for (int rank = 0; rank < 6; ++rank) {
    const NodeLayout l = layout_of(hosts, rank);
    EXPECT_EQ(l.nodes, 3);
    EXPECT_EQ(l.hosts, (std::vector<std::string>{"nodeB", "nodeA", "nodeC"}));
    EXPECT_EQ(l.node, node[rank]) << "rank " << rank;
    EXPECT_EQ(l.local_rank, local[rank]) << "rank " << rank;
    EXPECT_EQ(l.local_size, local_size[rank]) << "rank " << rank;
    EXPECT_FALSE(l.emulated);
  }
}

TEST(NodeLayout, HostNamesAreComparedExactly) {
  // Short and fully qualified names are different hosts to MPI; nccltune does not guess.
  const std::vector<std::string> hosts = {"node01", "node01.cluster", "node01"};
  EXPECT_EQ(layout_of(hosts, 0).nodes, 2);
  EXPECT_EQ(layout_of(hosts, 2).local_rank, 1);
}

TEST(NodeLayout, EmulatedBlocks) {
  const std::vector<std::string> hosts(8, "vm");
  const int node[] = {0, 0, 1, 1, 2, 2, 3, 3};
  for (int rank = 0; rank < 8; ++rank) {
    const NodeLayout l = layout_of(hosts, rank, 4);
    EXPECT_TRUE(l.emulated);
    EXPECT_EQ(l.nodes, 4);
    EXPECT_EQ(l.local_size, 2);
    EXPECT_EQ(l.node, node[rank]) << "rank " << rank;
    EXPECT_EQ(l.local_rank, rank % 2) << "rank " << rank;
    EXPECT_EQ(l.hosts, (std::vector<std::string>{"vm-node0", "vm-node1", "vm-node2", "vm-node3"}));
  }
}

TEST(NodeLayout, EmulationTwoNodesOfTwo) {
  // What bench_mpi checks end to end: 4 ranks as 2 nodes, devices 0,1,0,1.
  const std::vector<std::string> hosts(4, "ci");
  const int device[] = {0, 1, 0, 1};
  for (int rank = 0; rank < 4; ++rank) {
    const NodeLayout l = layout_of(hosts, rank, 2);
    EXPECT_EQ(l.local_rank, device[rank]);
    EXPECT_EQ(l.hosts[static_cast<size_t>(l.node)], rank < 2 ? "ci-node0" : "ci-node1");
  }
}

TEST(NodeLayout, EmulationOverridesRealHosts) {
  // Emulation ignores the real host names (every rank is on one machine anyway).
  const std::vector<std::string> hosts = {"a", "b", "a", "b"};
  const NodeLayout l = layout_of(hosts, 1, 2);
  EXPECT_EQ(l.node, 0);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.nodes, 2);
}

TEST(NodeLayout, EmulationOfOneNodeAndOfEveryRank) {
  const std::vector<std::string> hosts(4, "vm");
  const NodeLayout one = layout_of(hosts, 3, 1);
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.local_rank, 3);
  EXPECT_EQ(one.local_size, 4);
  const NodeLayout each = layout_of(hosts, 3, 4);
  EXPECT_EQ(each.nodes, 4);
  EXPECT_EQ(each.node, 3);
  EXPECT_EQ(each.local_rank, 0);
  EXPECT_EQ(each.local_size, 1);
}

TEST(NodeLayout, EmulationMustDivideTheRanks) {
  const std::vector<std::string> hosts(4, "vm");
  for (int emulate : {3, 5, 8}) {
    Result<NodeLayout> l = node_layout(hosts, 0, emulate);
    ASSERT_FALSE(l.ok()) << emulate << " nodes accepted for 4 ranks";
    EXPECT_NE(l.error().find("NCCLTUNE_EMULATE_NODES=" + std::to_string(emulate)), std::string::npos)
        << l.error();
    EXPECT_NE(l.error().find("4 ranks"), std::string::npos) << l.error();
  }
}
