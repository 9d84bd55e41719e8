#include "tune_profile/nccl_node_layout.h"

#include <gtest/gtest.h>

#include "tune_profile/cluster_shape.h"

namespace nccltune {
namespace {

TEST(NcclNodeLayout, WithoutMnnvlNcclsNodeIsTheHost) {
  const auto hgx = nccl_node_layout(2, 8, 2, false);
  ASSERT_TRUE(hgx) << hgx.error();
  EXPECT_EQ(*hgx, (NcclNodeLayout{2, 8, 2, false}));
  EXPECT_EQ(describe_profile_shape(nccl_counts(*hgx)), "2 nodes x 8 GPUs");
  // A log that did not say: the host.
  EXPECT_EQ(*nccl_node_layout(4, 4, std::nullopt, std::nullopt), (NcclNodeLayout{4, 4, 4, false}));
  // NCCL counts hosts without MNNVL: another count is a misread log, not a layout.
  const auto odd = nccl_node_layout(4, 4, 1, false);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error(), "NCCL counted 1 node on 4 hosts without MNNVL (its comm line's nNodes)");
}

TEST(NcclNodeLayout, WithMnnvlAnNvlinkDomainIsOneNode) {
  const auto rack = nccl_node_layout(4, 4, 1, true);
  ASSERT_TRUE(rack) << rack.error();
  EXPECT_EQ(rack->ranks_per_node(), 16);
  EXPECT_EQ(describe_profile_shape(nccl_counts(*rack)), "1 NVLink domain of 16 GPUs on 4 hosts");
  const auto two = nccl_node_layout(4, 4, 2, true);
  ASSERT_TRUE(two) << two.error();
  EXPECT_EQ(describe_profile_shape(nccl_counts(*two)), "2 NVLink domains of 8 GPUs on 4 hosts");
  const auto uneven = nccl_node_layout(4, 4, 3, true);
  ASSERT_FALSE(uneven);
  EXPECT_EQ(uneven.error(),
            "NCCL counted 3 NVLink domains (MNNVL 1, nNodes 3) on 4 hosts: tune needs NVLink domains of equal "
            "numbers of hosts");
}

TEST(NcclNodeLayout, AProfileCountsInNcclsTerms) {
  const ProfileShape hgx = nccl_counts({2, 8, 2, false});
  EXPECT_EQ(hgx.nodes, 2);
  EXPECT_EQ(hgx.gpus_per_node, 8);
  EXPECT_EQ(hgx.ranks, 16);
  EXPECT_EQ(hgx.hosts, 0);  // written only for MNNVL
  EXPECT_FALSE(hgx.mnnvl);
  const ProfileShape rack = nccl_counts({4, 4, 1, true});  // one domain of 4 trays
  EXPECT_EQ(rack.nodes, 1);
  EXPECT_EQ(rack.gpus_per_node, 16);
  EXPECT_EQ(rack.hosts, 4);
  EXPECT_TRUE(rack.mnnvl);
  EXPECT_EQ(nccl_shape_in(CommRole::rail, rack), (Shape{CommRole::rail, 1, 4}));  // MNNVL 1, 4 local ranks
  EXPECT_EQ(nccl_shape_in(CommRole::rail, nccl_counts({4, 4, 2, true})), (Shape{CommRole::rail, 2, 2}));
}

TEST(NcclNodeLayout, NodeCountsOfARackAreWholeDomainsOrInsideOne) {
  const NcclNodeLayout two{4, 4, 2, true};
  EXPECT_EQ(*subset_layout(1, two), (NcclNodeLayout{1, 4, 1, false}));
  EXPECT_EQ(*subset_layout(2, two), (NcclNodeLayout{2, 4, 1, true}));
  EXPECT_EQ(*subset_layout(4, two), two);
  const NcclNodeLayout six{6, 4, 3, true};
  const auto three = subset_layout(3, six);
  ASSERT_FALSE(three);
  EXPECT_EQ(three.error(),
            "--node-counts: 3 hosts are not whole NVLink domains of 2 hosts (MNNVL: NCCL counts a domain as "
            "one node)");
  EXPECT_EQ(*subset_layout(3, NcclNodeLayout{4, 8, 4, false}), (NcclNodeLayout{3, 8, 3, false}));
}

TEST(NcclNodeLayout, SearchFactsArePerNcclNode) {
  NodeType tray;
  tray.gpus = 4;
  tray.nics = 4;
  auto shape = cluster_shape({tray, tray, tray, tray}, {"t0", "t1", "t2", "t3"}, false);
  ASSERT_TRUE(shape) << shape.error();
  EXPECT_EQ(shape_facts(*shape, 22809).nodes, 4);  // hosts until NCCL says otherwise
  shape->set_nccl({4, 4, 1, true});
  const ShapeFacts facts = shape_facts(*shape, 22809);
  EXPECT_EQ(facts.nodes, 1);
  EXPECT_EQ(facts.gpus_per_node, 16);
  EXPECT_EQ(facts.nics, 16);
}

}  // namespace
}  // namespace nccltune
