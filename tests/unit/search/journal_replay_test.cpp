// What `tune --resume` takes from a journal of several node counts (search/journal_replay.h):
// each count its own trials, and trials written before counts were recorded only for the count
// of the whole allocation they ran on.
#include "search/journal_replay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

// A trial under the tuner plugin resumes with what the plugin served; one from a journal written
// before that was recorded proves nothing about service and is measured again.
TEST(JournalReplay, APluginTrialResumesWithWhatThePluginServedOrIsMeasuredAgain) {
  const auto dir = std::filesystem::temp_directory_path() / ("nccltune-replay-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const JournalScope at = scope(2, true);
  TrialRequest request;
  request.grid = {8, 1024, 128};
  request.env = {{"NCCL_NET_GDR_LEVEL", "SYS"}};
  request.plugin_profile = "schema: nccltune/profile/v2\n";
  int measured = 0;
  const TrialExecutor measure = [&](const TrialRequest&) {
    ++measured;
    TrialMeasurement m;
    m.ops = {"all_reduce", "all_reduce"};
    m.sizes = {8, 1024};
    m.time_us = m.busbw = {1, 2};
    m.plugin_served = {0, 1};
    m.plugin_declined = "Ring/LL128 is not available to this communicator";
    return m;
  };
  const auto never_again = [](const TrialRequest&) { return false; };
  const auto no_warning = [](const std::string& why) { ADD_FAILURE() << why; };
  {
    Result<Journal> journal = Journal::open(dir / "j.jsonl");
    ASSERT_TRUE(journal.ok()) << journal.error();
    journaled_executor(*journal, at, {}, measure, never_again, no_warning)(request);
  }
  Result<std::vector<JournalEntry>> written = Journal::read(dir / "j.jsonl");
  ASSERT_TRUE(written.ok()) << written.error();
  ASSERT_EQ(written->size(), 1u);
  Result<Journal> journal = Journal::open(dir / "j.jsonl");
  ASSERT_TRUE(journal.ok()) << journal.error();
  const TrialMeasurement resumed = journaled_executor(*journal, at, resumable_trials(*written, at), measure,
                                                      never_again, no_warning)(request);
  EXPECT_EQ(measured, 1);
  EXPECT_TRUE(resumed.cached);
  EXPECT_EQ(resumed.plugin_served, (std::vector<int>{0, 1}));
  EXPECT_EQ(resumed.plugin_declined, "Ring/LL128 is not available to this communicator");

  std::vector<JournalEntry> older = *written;
  older[0].plugin_served.clear();
  const TrialMeasurement again = journaled_executor(*journal, at, resumable_trials(older, at), measure,
                                                    never_again, no_warning)(request);
  EXPECT_EQ(measured, 2);
  EXPECT_FALSE(again.cached);
  std::filesystem::remove_all(dir);
}

// A trial on split communicators resumes with each point's communicator; the same request on the
// world alone is another trial (its key has no "|comms:").
TEST(JournalReplay, ATrialOnSplitCommunicatorsResumesWithEachPointsCommunicator) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("nccltune-replay-comms-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const JournalScope at = scope(2, true);
  TrialRequest request;
  request.grid = {8, 1024, 128};
  request.comms = {"world", "rail"};
  int measured = 0;
  const TrialExecutor measure = [&](const TrialRequest& r) {
    ++measured;
    TrialMeasurement m;
    for (const std::string& comm : r.comms)
      for (std::uint64_t bytes : {8, 1024}) {
        m.ops.push_back("all_reduce");
        m.sizes.push_back(bytes);
        m.time_us.push_back(1);
        m.busbw.push_back(2);
        if (r.comms.size() > 1) m.comms.push_back(comm);
      }
    m.communicators = static_cast<int>(r.comms.size());
    return m;
  };
  const auto never_again = [](const TrialRequest&) { return false; };
  const auto no_warning = [](const std::string& why) { ADD_FAILURE() << why; };
  {
    Result<Journal> journal = Journal::open(dir / "j.jsonl");
    ASSERT_TRUE(journal.ok()) << journal.error();
    journaled_executor(*journal, at, {}, measure, never_again, no_warning)(request);
  }
  Result<std::vector<JournalEntry>> written = Journal::read(dir / "j.jsonl");
  ASSERT_TRUE(written.ok()) << written.error();
  ASSERT_EQ(written->size(), 1u);
  EXPECT_EQ((*written)[0].comms, request.comms);
  EXPECT_EQ((*written)[0].point_comms, (std::vector<std::string>{"world", "world", "rail", "rail"}));
  EXPECT_EQ((*written)[0].communicators, 2);
  Result<Journal> journal = Journal::open(dir / "j.jsonl");
  ASSERT_TRUE(journal.ok()) << journal.error();
  const auto cache = resumable_trials(*written, at);
  const TrialMeasurement resumed =
      journaled_executor(*journal, at, cache, measure, never_again, no_warning)(request);
  EXPECT_EQ(measured, 1);
  EXPECT_TRUE(resumed.cached);
  EXPECT_EQ(resumed.comms, (std::vector<std::string>{"world", "world", "rail", "rail"}));
  EXPECT_EQ(resumed.sizes, (std::vector<std::uint64_t>{8, 1024, 8, 1024}));

  TrialRequest world = request;
  world.comms = {"world"};
  const TrialMeasurement alone =
      journaled_executor(*journal, at, cache, measure, never_again, no_warning)(world);
  EXPECT_EQ(measured, 2);
  EXPECT_FALSE(alone.cached);
  EXPECT_TRUE(alone.comms.empty());
  std::filesystem::remove_all(dir);
}
