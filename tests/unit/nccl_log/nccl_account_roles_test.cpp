#include <gtest/gtest.h>

#include "collectives/nccl_info_log.h"
#include "nccl_log/nccl_account.h"

namespace nccltune {
namespace {

NcclInfoLog comm_line(const char* line) { return parse_nccl_info_log(line, "log"); }

TEST(NcclAccountRoles, SplitCommunicatorsAreKnownByTheirCommLine) {
  // HGX: a node is one node, a rail one rank per node.
  EXPECT_EQ(comm_role_of_log(comm_line(
                "host1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n")),
            "node");
  EXPECT_EQ(comm_role_of_log(comm_line(
                "host1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n")),
            "rail");
  // MNNVL: a rail of four trays in one NVLink domain is one node to NCCL, but says MNNVL 1 (a
  // node's ranks, on one host, never do); across two domains it has two ranks on each.
  EXPECT_EQ(comm_role_of_log(comm_line(
                "tray1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 1\n")),
            "rail");
  EXPECT_EQ(comm_role_of_log(comm_line(
                "tray1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 1\n")),
            "rail");
  EXPECT_EQ(comm_role_of_log(comm_line(
                "host1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0\n")),
            "ranks 8 on 2 nodes");
}

}  // namespace
}  // namespace nccltune
