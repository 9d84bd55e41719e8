// The tune job in one process: a pretend group of ranks, trials answered from a fake GPU model,
// a snapshot for the nodes' topology. What it writes (the profile, the journal) and how it
// resumes, without MPI or worker processes.
#include "tune/tune_job.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/size_sweep.h"
#include "fake_model.h"
#include "model_executor.h"
#include "profile/profile.h"
#include "test_files.h"
#include "tune/journal.h"

using namespace nccltune;
using namespace nccltune::test_support;

namespace {

constexpr int kRanks = 8;  // 2 emulated nodes x 4 ranks

// Rank 0 of kRanks ranks, alone in this process: what rank 0 sends goes nowhere, and every
// node's first rank reports the same node as rank 0 (the nodes are alike).
class PretendRanks : public SoloGroup {
 public:
  explicit PretendRanks(const NodeLayout& layout) : layout_(layout) {}
  int size() const override { return kRanks; }
  std::vector<std::string> gather(const std::string& value) override {
    std::vector<std::string> all(kRanks);
    for (int rank = 0; rank < kRanks; rank += layout_.local_size) all[static_cast<std::size_t>(rank)] = value;
    return all;
  }

 private:
  NodeLayout layout_;
};

NodeLayout two_emulated_nodes() {
  NodeLayout layout;
  layout.nodes = 2;
  layout.local_size = kRanks / 2;
  layout.hosts = {"node-a", "node-b"};
  layout.emulated = true;
  return layout;
}

// A trial answered by the model, as the worker processes of every rank would answer it.
struct ModelTrials {
  ModelExecutor executor;
  int calls = 0;

  TrialRunner runner() {
    return [this](RankGroup&, const TrialSpec& spec) {
      ++calls;
      TrialRequest request;
      request.env = spec.env;
      request.grid = {spec.config.sweep.min_bytes, spec.config.sweep.max_bytes,
                      spec.config.sweep.step_factor};
      request.iterations = spec.config.sweep.iterations;
      request.warmup = spec.config.sweep.warmup;
      const TrialMeasurement measured = executor(request);
      TrialResult result;
      result.outcome = measured.outcome;
      result.reason = measured.reason;
      for (std::size_t i = 0; i < measured.sizes.size(); ++i) {
        SizeMeasurement size;
        size.bytes = measured.sizes[i];
        size.count = size.bytes / 4;
        size.out_of_place_us = measured.time_us[i];
        size.out_of_place_wrong = 0;
        result.sizes.push_back(size);
      }
      const auto& device = executor.model().devices.front();
      result.device = {device.name, device.pci, device.sm};
      result.nccl_version = 22809;
      result.cuda_driver = 13000;
      return result;
    };
  }
};

ModelTrials model_trials(const std::string& model_file) {
  Result<fake::FakeModel> model = fake::load_fake_model(fixture("models/" + model_file).string());
  EXPECT_TRUE(model) << model.error();
  return ModelTrials{ModelExecutor(model ? *model : fake::FakeModel{}, kRanks)};
}

TuneOptions options(const TempDir& work) {
  TuneOptions o;
  o.space_file = fixture("spaces/tune-small.yaml").string();
  o.out_dir = (work / "store").string();
  o.from = fixture("nodes/dgx-h100").string();
  o.progress = ProgressStyle::log;
  o.strategy.screen_grid = {8, 64 << 20, 8};
  o.strategy.final_grid = {8, 64 << 20, 4};
  return o;
}

const std::string kKey = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";

}  // namespace

TEST(TuneJob, WritesTheModelsOptimumAndJournalsEveryTrial) {
  TempDir work("tune-job");
  ModelTrials trials = model_trials("tune-one-knob.yaml");
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  ASSERT_EQ(run_tune_job(group, layout, options(work), trials.runner()), 0);

  Result<Profile> profile = parse_profile(read_file(work / "store" / kKey / "2n.yaml"), "2n.yaml");
  ASSERT_TRUE(profile) << profile.error();
  EXPECT_EQ(profile->shape.node_type_key, kKey);
  EXPECT_EQ(profile->shape.nodes, 2);
  // The model's optimum, +15% bus bandwidth (its algorithm and protocol lists may come with it).
  EXPECT_EQ(profile->env["NCCL_NET_GDR_LEVEL"], "SYS");
  EXPECT_FALSE(profile->per_size.empty());
  EXPECT_GT(profile->results.speedup_geomean, 1.03);

  Result<std::vector<JournalEntry>> journal = Journal::read(work / "store" / "journal.jsonl");
  ASSERT_TRUE(journal) << journal.error();
  // Every trial but the probe is journaled, each for this node type and NCCL.
  EXPECT_EQ(static_cast<int>(journal->size()), trials.calls - 1);
  EXPECT_EQ(profile->provenance.trials, trials.calls - 1);
  for (const JournalEntry& entry : *journal) {
    EXPECT_EQ(entry.node_type_key, kKey);
    EXPECT_EQ(entry.nccl_version, "2.28.9");
  }
}

TEST(TuneJob, AResumedRunMeasuresNothingTheJournalHolds) {
  TempDir work("tune-job");
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  ModelTrials first = model_trials("tune-one-knob.yaml");
  ASSERT_EQ(run_tune_job(group, layout, options(work), first.runner()), 0);
  const std::string written = read_file(work / "store" / kKey / "2n.yaml");

  TuneOptions again = options(work);
  again.resume = true;
  ModelTrials second = model_trials("tune-one-knob.yaml");
  ASSERT_EQ(run_tune_job(group, layout, again, second.runner()), 0);
  EXPECT_EQ(second.calls, 1);  // the probe: every other trial came from the journal
  Result<Profile> before = parse_profile(written, "first");
  Result<Profile> after = parse_profile(read_file(work / "store" / kKey / "2n.yaml"), "second");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(after->env, before->env);
  EXPECT_EQ(after->per_size, before->per_size);
  EXPECT_EQ(after->results, before->results);
}

TEST(TuneJob, DefaultsThatCannotRunEndTheJobWithoutAProfile) {
  TempDir work("tune-job");
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  TrialRunner broken = [](RankGroup&, const TrialSpec&) {
    TrialResult result;
    result.outcome = TrialOutcome::init_error;
    result.reason = "rank 0: ncclCommInitRank failed";
    return result;
  };
  EXPECT_EQ(run_tune_job(group, layout, options(work), broken), 1);
  EXPECT_FALSE(std::filesystem::exists(work / "store" / kKey));
}
