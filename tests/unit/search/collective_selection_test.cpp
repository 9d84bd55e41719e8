#include "search/collective_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "base/collective_names.h"

namespace nccltune {
namespace {

using Names = std::vector<std::string>;

TEST(CollectiveSelection, DefaultsTuneThreeAndGuardAlltoall) {
  const Result<CollectiveSelection> s = select_collectives(kDefaultTunedCollectives, "");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->tuned, (Names{"all_reduce", "all_gather", "reduce_scatter"}));
  EXPECT_EQ(s->guards, (Names{"alltoall"}));
}

TEST(CollectiveSelection, TunedAlltoallIsNoGuardAndNoneGuardsNothing) {
  const Result<CollectiveSelection> tuned = select_collectives("alltoall,all_reduce", "");
  ASSERT_TRUE(tuned) << tuned.error();
  EXPECT_EQ(tuned->tuned, (Names{"alltoall", "all_reduce"}));
  EXPECT_TRUE(tuned->guards.empty());
  const Result<CollectiveSelection> none = select_collectives("all_reduce", "none");
  ASSERT_TRUE(none) << none.error();
  EXPECT_TRUE(none->guards.empty());
  const Result<CollectiveSelection> named = select_collectives("all_reduce", "reduce_scatter,alltoall");
  ASSERT_TRUE(named) << named.error();
  EXPECT_EQ(named->guards, (Names{"reduce_scatter", "alltoall"}));
}

TEST(CollectiveSelection, BadListsAreOneLineNamingTheFlag) {
  EXPECT_EQ(select_collectives("all_reduce,allgather", "").error(),
            "--ops: 'allgather' is not a collective tune measures (all_reduce, all_gather, reduce_scatter, "
            "alltoall)");
  EXPECT_EQ(select_collectives("", "").error(),
            "--ops: '' is not a collective tune measures (all_reduce, all_gather, reduce_scatter, alltoall)");
  EXPECT_EQ(select_collectives("all_reduce,all_reduce", "").error(), "--ops: all_reduce is named twice");
  EXPECT_EQ(select_collectives("all_reduce", "broadcast").error(),
            "--guard: 'broadcast' is not a collective tune measures (all_reduce, all_gather, reduce_scatter, "
            "alltoall)");
  EXPECT_EQ(select_collectives("all_reduce,alltoall", "alltoall").error(),
            "--guard: alltoall is tuned (--ops); a collective is tuned or guarded, not both");
}


// The flag's help and errors list what base/collective_names.h marks tuned, in that text.
TEST(CollectiveSelection, TheTunableListIsTheTablesTunedCollectives) {
  std::set<std::string_view> tuned;
  for (const CollectiveName& row : kCollectiveTable)
    if (row.tuned) tuned.insert(row.name);
  std::set<std::string_view> listed;
  for (std::string_view text = kTunableCollectives; !text.empty();) {
    const std::size_t comma = std::min(text.find(", "), text.size());
    listed.insert(text.substr(0, comma));
    text.remove_prefix(std::min(comma + 2, text.size()));
  }
  EXPECT_EQ(listed, tuned);
}

}  // namespace
}  // namespace nccltune
