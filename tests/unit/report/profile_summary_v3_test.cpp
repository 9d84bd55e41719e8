// `nccltune show` of a v3 profile: the world's collectives under its heading, then each other
// communicator shape's, and the settings withheld from env; a v2 profile shows as it did.
#include <gtest/gtest.h>

#include "report/profile_summary.h"
#include "report_fixtures.h"

using namespace nccltune;
using nccltune::test_support::read_report_profile;

namespace {

Profile summary_v3_profile() {
  Profile p = read_report_profile("collectives/2n.yaml");
  CommunicatorSection rail;
  rail.nodes = p.shape.nodes;
  rail.ranks_per_node = 1;
  rail.role = CommRole::rail;
  rail.collectives["all_reduce"] = p.collectives.at("all_reduce");
  rail.collectives["all_reduce"].results.baseline.assign(rail.collectives["all_reduce"].results.sizes.size(),
                                                         2.0);
  CommunicatorSection node;
  node.nodes = 1;
  node.ranks_per_node = p.shape.gpus_per_node;
  node.role = CommRole::node;
  p.shapes = {rail, node};
  p.withheld = {{{{"NCCL_BUFFSIZE", "8388608"}}, "rail (2 nodes x 1): all_reduce -20% at 1M"}};
  return p;
}

}  // namespace

TEST(ProfileSummaryV3, ShowsEachCommunicatorShapeAfterTheWorld) {
  const Profile p = summary_v3_profile();
  const std::string out = render_profile_summary(p, "v3.yaml");
  const std::size_t world = out.find("\nworld: 2 nodes x 8 ranks\n");
  const std::size_t rail = out.find("\nrail: 2 nodes x 1 rank\n");
  const std::size_t node = out.find("\nnode: 1 node x 8 ranks\n(no collective measured)\n");
  const std::size_t tuned = out.find("\ntuned    ");
  ASSERT_NE(world, std::string::npos) << out;
  ASSERT_NE(rail, std::string::npos) << out;
  ASSERT_NE(node, std::string::npos) << out;
  EXPECT_LT(world, rail);
  EXPECT_LT(rail, node);
  EXPECT_LT(node, tuned);
  // The world's collectives, then the rail's all_reduce under its name, with its own baseline.
  EXPECT_LT(world, out.find("\nall_gather\n"));
  EXPECT_LT(out.find("\nall_gather\n"), rail);
  EXPECT_NE(out.find("\nall_reduce\n", rail), std::string::npos);
  EXPECT_NE(out.find("           2.00  ", rail), std::string::npos) << out.substr(rail);
  EXPECT_NE(out.find("withheld NCCL_BUFFSIZE=8388608: rail (2 nodes x 1): all_reduce -20% at 1M\n"),
            std::string::npos)
      << out;
}

TEST(ProfileSummaryV3, AV2ProfileShowsAsBefore) {
  Profile p = summary_v3_profile();
  const std::string v3 = render_profile_summary(p, "v3.yaml");
  p.shapes.clear();
  p.withheld.clear();
  const std::string v2 = render_profile_summary(p, "v3.yaml");
  EXPECT_EQ(v2, render_profile_summary(read_report_profile("collectives/2n.yaml"), "v3.yaml"));
  EXPECT_EQ(v2.find("world:"), std::string::npos);
  EXPECT_EQ(v2.find("withheld"), std::string::npos);
  // The world's part of the v3 rendering is the v2 rendering's, heading aside.
  const std::size_t world = v3.find("world: 2 nodes x 8 ranks\n");
  ASSERT_NE(world, std::string::npos);
  const std::size_t from = v2.find("all_gather\n");
  ASSERT_NE(from, std::string::npos);
  EXPECT_EQ(v3.substr(world + 25, v3.find("rail: ") - world - 25),
            v2.substr(from, v2.find("tuned    ") - from));
}
