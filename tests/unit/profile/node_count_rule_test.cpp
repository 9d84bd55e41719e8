// The serving rule for node counts that were not measured (profile/node_count_rule.h): exact
// counts never reach it; between two counts that agree, between two that disagree, above the
// largest and below the smallest measured count.
#include "profile/node_count_rule.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "measured_profile.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

Profile measured(int nodes, Env env, std::vector<SizeChoice> per_size) {
  return test_support::measured_profile(nodes, std::move(env), std::move(per_size));
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

const SizeChoice kSmallTree{0, 65535, "Tree", "LL", 0};
const SizeChoice kMidRing{65536, 1048576, "Ring", "LL128", 0};
const SizeChoice kMidTree{65536, 1048576, "Tree", "LL128", 0};

TEST(NodeCountRule, TransportSettingsAreTheOnesWhoseEffectDoesNotDependOnTheNodeCount) {
  for (const char* name :
       {"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_HCA",
        "NCCL_CROSS_NIC", "NCCL_PXN_DISABLE", "NCCL_BUFFSIZE", "NCCL_SOCKET_IFNAME"})
    EXPECT_TRUE(is_transport_setting(name)) << name;
  for (const char* name : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
                           "NCCL_NTHREADS", "NCCL_NVLS_ENABLE", "NCCL_SOMETHING_NEW"})
    EXPECT_FALSE(is_transport_setting(name)) << name;
}

TEST(NodeCountRule, BetweenTwoCountsThatAgreeEverythingStays) {
  const Profile two =
      measured(2, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring,Tree"}}, {kSmallTree, kMidRing});
  const Profile eight =
      measured(8, {{"NCCL_NET_GDR_LEVEL", "PHB"}, {"NCCL_ALGO", "Ring,Tree"}}, {kSmallTree, kMidRing});
  const ServedProfile served = serve_unmeasured_count(4, {&two, "2n.yaml"}, {&eight, "8n.yaml"}, true);
  EXPECT_EQ(served.sources, (std::vector<std::string>{"2n.yaml", "8n.yaml"}));
  // Transport from the nearest (preferred) side, whatever the other says; the rest agrees.
  EXPECT_EQ(served.profile.env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring,Tree"}}));
  EXPECT_EQ(served.profile.collectives.at("all_reduce").per_size,
            (std::vector<SizeChoice>{kSmallTree, kMidRing}));
  EXPECT_TRUE(served.withheld.empty());
  EXPECT_EQ(served.profile.shape.nodes, 2);  // it says where it came from
}

TEST(NodeCountRule, BetweenTwoCountsThatDisagreeTheirChoicesAreWithheld) {
  const Profile two =
      measured(2, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring"}, {"NCCL_MIN_NCHANNELS", "32"}},
               {kSmallTree, kMidRing});
  const Profile eight =
      measured(8, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_MIN_NCHANNELS", "32"}}, {kSmallTree, kMidTree});
  const ServedProfile served = serve_unmeasured_count(4, {&two, "2n.yaml"}, {&eight, "8n.yaml"}, false);
  EXPECT_EQ(served.sources.front(), "8n.yaml");  // nearest above preferred
  EXPECT_EQ(served.profile.env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_MIN_NCHANNELS", "32"}}));
  EXPECT_TRUE(mentions(served.withheld, "NCCL_ALGO=Ring")) << served.withheld.size();
  // The small sizes agree (Tree/LL on both); the middle ones do not.
  EXPECT_EQ(served.profile.collectives.at("all_reduce").per_size, (std::vector<SizeChoice>{kSmallTree}));
  EXPECT_TRUE(mentions(served.withheld, "all_reduce 64K .. 1M: Tree/LL128 on 8 nodes, Ring/LL128 on 2"));
}

TEST(NodeCountRule, AboveTheLargestMeasuredCountOnlyTransportStays) {
  const Profile two =
      measured(2, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_ALGO", "Ring"}}, {kSmallTree, kMidRing});
  const ServedProfile served = serve_unmeasured_count(8, {&two, "2n.yaml"}, {}, true);
  EXPECT_EQ(served.profile.env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  EXPECT_TRUE(served.profile.collectives.at("all_reduce").per_size.empty());
  EXPECT_TRUE(mentions(served.withheld, "NCCL_ALGO=Ring: above the largest measured node count (2)"));
  EXPECT_TRUE(mentions(served.withheld, "all_reduce per-size choices"));
  // And below the smallest, the same.
  const Profile eight = measured(8, {{"NCCL_ALGO", "Tree"}}, {kSmallTree});
  const ServedProfile below = serve_unmeasured_count(4, {}, {&eight, "8n.yaml"}, true);
  EXPECT_TRUE(below.profile.env.empty());
  EXPECT_TRUE(mentions(below.withheld, "below the smallest measured node count (8)"));
}

}  // namespace
}  // namespace nccltune
