// What `tune --resume` takes from a journal of several node counts (search/journal_replay.h):
// each count its own trials, and trials written before counts were recorded only for the count
// of the whole allocation they ran on.
#include "search/journal_replay.h"

#include <gtest/gtest.h>

#include <set>

using namespace nccltune;

namespace {

JournalEntry trial(int nodes, const std::string& gdr) {
  JournalEntry e;
  e.node_type_key = "h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28";
  e.nccl_version = "2.28.9";
  e.nodes = nodes;
  e.env = {{"NCCL_NET_GDR_LEVEL", gdr}};
  e.iterations = 5;
  e.sizes = {8, 1024};
  e.time_us = {1, 2};
  e.busbw = {1, 2};
  return e;
}

JournalScope scope(int nodes, bool takes_unnumbered) {
  return {"h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28", "2.28.9", nodes, takes_unnumbered};
}

std::set<std::string> gdr_levels(const std::map<std::string, JournalEntry>& trials) {
  std::set<std::string> levels;
  for (const auto& [key, entry] : trials) levels.insert(entry.env.at("NCCL_NET_GDR_LEVEL"));
  return levels;
}

}  // namespace

TEST(JournalReplay, EachNodeCountResumesItsOwnTrials) {
  const std::vector<JournalEntry> journal = {trial(8, "SYS"), trial(2, "PHB"), trial(0, "PIX")};
  // 8 is the allocation's count: it also takes the trial without a count.
  EXPECT_EQ(gdr_levels(resumable_trials(journal, scope(8, true))), (std::set<std::string>{"SYS", "PIX"}));
  EXPECT_EQ(gdr_levels(resumable_trials(journal, scope(2, false))), (std::set<std::string>{"PHB"}));
  EXPECT_TRUE(resumable_trials(journal, scope(4, false)).empty());
  // Another node type or NCCL: nothing.
  JournalScope other = scope(8, true);
  other.nccl_version = "2.27.3";
  EXPECT_TRUE(resumable_trials(journal, other).empty());
}
