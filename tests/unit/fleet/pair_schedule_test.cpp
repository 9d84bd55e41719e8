#include "fleet/pair_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace nccltune;

TEST(PairSchedule, FewerThanTwoNodesHaveNoRounds) {
  EXPECT_TRUE(round_robin(0).empty());
  EXPECT_TRUE(round_robin(1).empty());
  EXPECT_TRUE(round_robin(-3).empty());
  EXPECT_EQ(default_rounds(0), 0);
  EXPECT_EQ(default_rounds(1), 0);
}

TEST(PairSchedule, EveryPairExactlyOnceNoNodeTwiceInARound) {
  for (int n = 2; n <= 17; ++n) {
    SCOPED_TRACE("nodes " + std::to_string(n));
    const std::vector<PairRound> rounds = round_robin(n);
    const int expected_rounds = n % 2 == 0 ? n - 1 : n;
    ASSERT_EQ(static_cast<int>(rounds.size()), expected_rounds);
    std::set<NodePair> seen;
    std::vector<int> rests(static_cast<std::size_t>(n), 0);
    for (const PairRound& round : rounds) {
      EXPECT_EQ(static_cast<int>(round.size()), n / 2);
      std::set<int> busy;
      for (const NodePair& pair : round) {
        EXPECT_LT(pair[0], pair[1]);
        EXPECT_GE(pair[0], 0);
        EXPECT_LT(pair[1], n);
        EXPECT_TRUE(busy.insert(pair[0]).second) << "node " << pair[0] << " twice in a round";
        EXPECT_TRUE(busy.insert(pair[1]).second) << "node " << pair[1] << " twice in a round";
        EXPECT_TRUE(seen.insert(pair).second) << pair[0] << "-" << pair[1] << " twice";
      }
      EXPECT_TRUE(std::is_sorted(round.begin(), round.end()));
      for (int node = 0; node < n; ++node)
        if (!busy.count(node)) ++rests[static_cast<std::size_t>(node)];
    }
    EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2);
    for (int node = 0; node < n; ++node)
      EXPECT_EQ(rests[static_cast<std::size_t>(node)], n % 2) << "node " << node << " rests";
  }
}

TEST(PairSchedule, IsDeterministic) {
  EXPECT_EQ(round_robin(9), round_robin(9));
  const std::vector<PairRound> four = round_robin(4);
  ASSERT_EQ(four.size(), 3u);
  EXPECT_EQ(four[0], (PairRound{{0, 3}, {1, 2}}));
}

TEST(PairSchedule, DefaultRoundsGiveEachNodeThreePartners) {
  for (int n = 2; n <= 17; ++n) {
    SCOPED_TRACE("nodes " + std::to_string(n));
    const std::vector<PairRound> rounds = round_robin(n);
    const int count = default_rounds(n);
    ASSERT_LE(count, static_cast<int>(rounds.size()));
    std::vector<std::set<int>> partners(static_cast<std::size_t>(n));
    for (int r = 0; r < count; ++r)
      for (const NodePair& pair : rounds[static_cast<std::size_t>(r)]) {
        partners[static_cast<std::size_t>(pair[0])].insert(pair[1]);
        partners[static_cast<std::size_t>(pair[1])].insert(pair[0]);
      }
    for (int node = 0; node < n; ++node)
      EXPECT_GE(static_cast<int>(partners[static_cast<std::size_t>(node)].size()), std::min(3, n - 1))
          << "node " << node;
  }
  EXPECT_EQ(default_rounds(2), 1);
  EXPECT_EQ(default_rounds(3), 3);
  EXPECT_EQ(default_rounds(8), 3);
  EXPECT_EQ(default_rounds(9), 4);
  EXPECT_EQ(default_rounds(1000), 3);
}

TEST(PairSchedule, ParseRounds) {
  EXPECT_EQ(*parse_rounds("all", 8), 7);
  EXPECT_EQ(*parse_rounds("all", 9), 9);
  EXPECT_EQ(*parse_rounds("1", 8), 1);
  EXPECT_EQ(*parse_rounds("7", 8), 7);
  EXPECT_EQ(*parse_rounds("9", 9), 9);
  EXPECT_EQ(*parse_rounds("all", 100000), 99999);

  const Result<int> too_many = parse_rounds("8", 8);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error(), "--rounds: '8': expected \"all\" or a count from 1 to 7 (8 nodes)");
  for (const char* bad : {"0", "-1", "", "ALL", "3x", " 3", "2.0", "99999999999999999999", "a\nb"}) {
    const Result<int> parsed = parse_rounds(bad, 8);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().rfind("--rounds: ", 0), 0u) << parsed.error();
    EXPECT_EQ(parsed.error().find('\n'), std::string::npos) << parsed.error();
  }
  const Result<int> one_node = parse_rounds("1", 1);
  ASSERT_FALSE(one_node.ok());
  EXPECT_EQ(one_node.error(), "--rounds: '1': 1 node(s) make no pairs; only \"all\" fits");
  EXPECT_EQ(*parse_rounds("all", 1), 0);
}

TEST(PairSchedule, WithoutNodes) {
  const PairRound round{{0, 3}, {1, 2}, {4, 7}, {5, 6}};
  EXPECT_EQ(without_nodes(round, {}), round);
  EXPECT_EQ(without_nodes(round, {3, 6}), (PairRound{{1, 2}, {4, 7}}));
  EXPECT_EQ(without_nodes(round, {9}), round);
  EXPECT_TRUE(without_nodes(round, {0, 1, 4, 5}).empty());
}
