#include "topology/link_type.h"

#include <gtest/gtest.h>

using namespace nccltune;

TEST(LinkType, ParsesNvidiaSmiCells) {
  EXPECT_EQ(parse_link_type("X"), (LinkType{LinkKind::self, 0}));
  EXPECT_EQ(parse_link_type("NV18"), (LinkType{LinkKind::nvlink, 18}));
  EXPECT_EQ(parse_link_type("PIX"), (LinkType{LinkKind::pix, 0}));
  EXPECT_EQ(parse_link_type("NODE"), (LinkType{LinkKind::node, 0}));
  EXPECT_EQ(parse_link_type("SOC"), (LinkType{LinkKind::sys, 0}));
  EXPECT_FALSE(parse_link_type("NV"));
  EXPECT_FALSE(parse_link_type("NV0"));
  EXPECT_FALSE(parse_link_type("NV1x"));
  EXPECT_FALSE(parse_link_type("pix"));
}

TEST(LinkType, FormatsAndOrdersNearestFirst) {
  EXPECT_EQ(to_string(LinkType{LinkKind::nvlink, 12}), "NV12");
  EXPECT_EQ(to_string(LinkType{LinkKind::sys, 0}), "SYS");
  EXPECT_LT(LinkKind::pix, LinkKind::pxb);
  EXPECT_LT(LinkKind::pxb, LinkKind::phb);
  EXPECT_LT(LinkKind::phb, LinkKind::node);
  EXPECT_LT(LinkKind::node, LinkKind::sys);
}
