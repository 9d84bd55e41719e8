#include "tune_profile/node_count_plan.h"

#include <gtest/gtest.h>

namespace nccltune {
namespace {

TEST(NodeCountPlan, DefaultIsTheAllocationAndThePowersOfTwoBelowIt) {
  EXPECT_EQ(*node_count_plan(std::nullopt, 8, true), (std::vector<int>{8, 4, 2}));
  EXPECT_EQ(*node_count_plan(std::nullopt, 6, true), (std::vector<int>{6, 4, 2}));
  EXPECT_EQ(*node_count_plan(std::nullopt, 2, true), (std::vector<int>{2}));
  EXPECT_EQ(*node_count_plan(std::nullopt, 1, true), (std::vector<int>{1}));
  EXPECT_EQ(*node_count_plan(std::nullopt, 8, false), (std::vector<int>{8}));  // unlike nodes: the whole only
}

TEST(NodeCountPlan, AskedCountsComeLargestFirst) {
  EXPECT_EQ(*node_count_plan(std::vector<int>{2, 8, 1}, 8, true), (std::vector<int>{8, 2, 1}));
}

TEST(NodeCountPlan, BadCountsAreOneLineNamingTheFlag) {
  for (const char* text : {"0", "-2", "two", "2,,4", "", "2.5", "4,2,4", "99999999999"}) {
    const auto parsed = parse_node_counts(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().rfind("--node-counts: ", 0), 0u) << parsed.error();
    EXPECT_EQ(parsed.error().find('\n'), std::string::npos);
  }
  EXPECT_EQ(*parse_node_counts("2,4,8"), (std::vector<int>{2, 4, 8}));
  const auto too_many = node_count_plan(std::vector<int>{16}, 8, true);
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error(), "--node-counts: 16 nodes, but the allocation has 8");
  const auto unlike = node_count_plan(std::vector<int>{2}, 8, false);
  ASSERT_FALSE(unlike);
  EXPECT_NE(unlike.error().find("unlike numbers of ranks"), std::string::npos);
}

}  // namespace
}  // namespace nccltune
