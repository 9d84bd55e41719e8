// The one table of collective names (base/collective_names.h).
#include "base/collective_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

using namespace nccltune;

TEST(CollectiveNames, EachNameOnceAndFound) {
  std::set<std::string_view> names;
  for (const CollectiveName& row : kCollectiveTable) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_EQ(find_collective_name(row.name), &row);
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_FALSE(is_known_collective("allreduce"));  // NCCL's function name, not nccl-tests'
  EXPECT_FALSE(is_known_collective(""));
}

TEST(CollectiveNames, AlltoallHasNoNcclFunctionAndIsTuned) {
  const CollectiveName* alltoall = find_collective_name("alltoall");
  ASSERT_NE(alltoall, nullptr);
  EXPECT_TRUE(alltoall->function.empty());
  EXPECT_TRUE(alltoall->log.empty());
  EXPECT_TRUE(alltoall->tuned);
  EXPECT_FALSE(find_collective_name("broadcast")->tuned);
  EXPECT_EQ(find_collective_name("reduce_scatter")->function, "reducescatter");
  EXPECT_EQ(find_collective_name("all_gather")->log, "AllGather");
}
