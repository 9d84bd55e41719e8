// The tune job in one process: a pretend group of ranks, trials answered from a fake GPU model,
// a snapshot for the nodes' topology. What it writes (the profile, the journal) and how it
// resumes, without MPI or worker processes.
#include "tune/tune_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "collectives/size_sweep.h"
#include "fake_model.h"
#include "model_executor.h"
#include "profile/profile.h"
#include "profile/size_ranges.h"
#include "search/journal.h"
#include "test_files.h"

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
  // The tune of the allocation's one node count runs on all of it.
  std::unique_ptr<RankGroup> split(int color) override {
    return color < 0 ? nullptr : std::make_unique<PretendRanks>(layout_);
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
      request.sizes.assign(spec.config.sweep.sizes.begin(), spec.config.sweep.sizes.end());
      request.iterations = spec.config.sweep.iterations;
      request.warmup = spec.config.sweep.warmup;
      request.collectives = spec.config.collectives;
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
        result.ops.push_back(measured.ops[i]);
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
  o.comms = {"world"};  // the model answers the world only
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
  EXPECT_FALSE(profile->collectives.at("all_reduce").per_size.empty());
  EXPECT_GT(profile->collectives.at("all_reduce").results.speedup_geomean, 1.03);
  // The world alone: v2 as before, no sections and nothing withheld.
  EXPECT_EQ(read_file(work / "store" / kKey / "2n.yaml").rfind("schema: nccltune/profile/v2\n", 0), 0u);

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

TEST(TuneJob, GdrKnobsAreNotSweptOnNodesWhereNcclCannotRegisterGpuMemory) {
  // The model's optimum is NCCL_NET_GDR_LEVEL=SYS (above); on nodes without nvidia_peermem or
  // dma-buf NCCL runs without GPUDirect RDMA, so the knob is never swept and never ships.
  TempDir work("tune-job-no-gdr");
  ModelTrials trials = model_trials("tune-one-knob.yaml");
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  TuneOptions o = options(work);
  o.from = fixture("nodes/dgx-h100-no-peermem").string();
  ASSERT_EQ(run_tune_job(group, layout, o, trials.runner()), 0);
  Result<Profile> profile = parse_profile(read_file(work / "store" / kKey / "2n.yaml"), "2n.yaml");
  ASSERT_TRUE(profile) << profile.error();
  EXPECT_EQ(profile->env.count("NCCL_NET_GDR_LEVEL"), 0u);
  Result<std::vector<JournalEntry>> journal = Journal::read(work / "store" / "journal.jsonl");
  ASSERT_TRUE(journal) << journal.error();
  for (const JournalEntry& entry : *journal) EXPECT_EQ(entry.env.count("NCCL_NET_GDR_LEVEL"), 0u);
}

TEST(TuneJob, TrialsOfTheDefaultsAndOfEnvsLeaveNcclsDefaultTunerInPlace) {
  // Only pair-mode trials and those through nccltune's tuner plugin with a profile name a tuner
  // (and replace NCCL's default one, as per_size does in jobs); the others leave NCCL to load the
  // one it loads by default, as jobs do.
  TempDir work("tune-job-default-tuner");
  ModelTrials trials = model_trials("tune-one-knob.yaml");
  std::vector<std::string> named;
  const TrialRunner model = trials.runner();
  const TrialRunner runner = [&](RankGroup& group, const TrialSpec& spec) {
    const bool through_plugin = !spec.config.pairs.empty() || spec.env.count("NCCLTUNE_PROFILE") > 0;
    if (const auto it = spec.env.find("NCCL_TUNER_PLUGIN"); it != spec.env.end() && !through_plugin)
      named.push_back(it->second);
    return model(group, spec);
  };
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  ASSERT_EQ(run_tune_job(group, layout, options(work), runner), 0);
  EXPECT_GT(trials.calls, 1);
  EXPECT_TRUE(named.empty()) << named.front();
}

// Trials answered from the model at each communicator of the config (the world, its rails and
// its nodes), each size tagged with its communicator, as the worker answers a split trial.
struct ShapedModelTrials {
  fake::FakeModel model;
  TrialRunner runner() const {
    return [this](RankGroup&, const TrialSpec& spec) {
      TrialResult result;
      result.nccl_version = 22809;
      result.cuda_driver = 13000;
      const auto& device = model.devices.front();
      result.device = {device.name, device.pci, device.sm};
      const std::vector<std::string> comms = spec.config.comms.empty() ? std::vector<std::string>{"world"}
                                                                       : spec.config.comms;
      for (const std::string& comm : comms) {
        const int ranks = comm == "rail" ? 2 : comm == "node" ? kRanks / 2 : kRanks;
        const ModelExecutor at(model, ranks, comm == "node" ? 1 : 2);
        TrialRequest request;
        request.env = spec.env;
        request.grid = {spec.config.sweep.min_bytes, spec.config.sweep.max_bytes, spec.config.sweep.step_factor};
        request.sizes.assign(spec.config.sweep.sizes.begin(), spec.config.sweep.sizes.end());
        request.iterations = spec.config.sweep.iterations;
        request.warmup = spec.config.sweep.warmup;
        request.collectives = spec.config.collectives;
        const TrialMeasurement measured = at(request);
        if (measured.outcome != TrialOutcome::ok) {
          result.outcome = measured.outcome;
          result.reason = measured.reason;
          return result;
        }
        for (std::size_t i = 0; i < measured.sizes.size(); ++i) {
          SizeMeasurement size;
          size.bytes = measured.sizes[i];
          size.count = size.bytes / 4;
          size.out_of_place_us = measured.time_us[i];
          size.out_of_place_wrong = 0;
          result.sizes.push_back(size);
          result.ops.push_back(measured.ops[i]);
          result.comms.push_back(comm);
        }
      }
      result.communicators = static_cast<int>(comms.size());
      return result;
    };
  }
};

TEST(TuneJob, EveryShapeIsMeasuredAndEnvShipsOnlyWhatSlowsNone) {
  TempDir work("tune-job-shapes");
  Result<fake::FakeModel> model = fake::load_fake_model(fixture("models/comm-shapes.yaml").string());
  ASSERT_TRUE(model) << model.error();
  const ShapedModelTrials trials{*model};
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  TuneOptions o = options(work);
  o.space_file = fixture("spaces/comm-shapes.yaml").string();
  o.comms.clear();  // the default: world, rail and node on 2 nodes
  o.strategy.collectives = {"all_reduce"};
  o.strategy.screen_grid = {64 << 10, 1 << 20, 4};
  o.strategy.final_grid = {64 << 10, 1 << 20, 4};
  ASSERT_EQ(run_tune_job(group, layout, o, trials.runner()), 0);

  Result<Profile> profile = parse_profile(read_file(work / "store" / kKey / "2n.yaml"), "2n.yaml");
  ASSERT_TRUE(profile) << profile.error();
  // GDR=SYS helps every shape; QPS=4 helps the world and slows the rails. (Without pair mode
  // NCCL_ALGO=Tree is screened as an env too: it wins on the world and loses on the nodes.)
  EXPECT_EQ(profile->env, (Env{{"NCCL_NET_GDR_LEVEL", "SYS"}}));
  const auto qps = std::find_if(profile->withheld.begin(), profile->withheld.end(), [](const WithheldSetting& w) {
    return w.env == Env{{"NCCL_IB_QPS_PER_CONNECTION", "4"}};
  });
  ASSERT_NE(qps, profile->withheld.end());
  EXPECT_EQ(qps->why.rfind("rail (2 nodes x 1): all_reduce -", 0), 0u) << qps->why;
  ASSERT_EQ(profile->shapes.size(), 2u);
  EXPECT_EQ(profile->shapes[0].role, CommRole::rail);
  EXPECT_EQ(profile->shapes[1].role, CommRole::node);
  // Each shape its own choice at 1M: the world's Tree/LL128, the rails' Ring/LL128.
  const auto at_1m = [](const CollectiveProfile& c) {
    const SizeChoice* choice = choice_for_size(c.per_size, 1 << 20);
    return choice ? choice->algo + "/" + choice->proto : std::string("none");
  };
  EXPECT_EQ(at_1m(profile->collectives.at("all_reduce")), "Tree/LL128");
  EXPECT_EQ(at_1m(profile->shapes[0].collectives.at("all_reduce")), "Ring/LL128");
  EXPECT_FALSE(profile->collectives.at("all_reduce").results.peak_bottleneck.starts_with("n/a"));
  EXPECT_TRUE(profile->shapes[0].collectives.at("all_reduce").results.peak_bottleneck.starts_with("n/a"));
}

TEST(TuneJob, AResumedRunMeasuresOnlyWhatReadsNcclsLog) {
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
  // The probe and the trials that read NCCL's log (one baseline, the first confirmation round's
  // defaults and winner); every other trial came from the journal.
  Result<Profile> before = parse_profile(written, "first");
  Result<Profile> after = parse_profile(read_file(work / "store" / kKey / "2n.yaml"), "second");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(second.calls, before->env.empty() ? 3 : 4);
  EXPECT_EQ(after->env, before->env);
  EXPECT_EQ(after->collectives.at(kAllReduce).per_size, before->collectives.at(kAllReduce).per_size);
  // The confirmation's first round was measured again: the same sizes, fresh numbers.
  EXPECT_EQ(after->collectives.at(kAllReduce).results.sizes,
            before->collectives.at(kAllReduce).results.sizes);
  // This runner's NCCL prints nothing: nothing is recorded of it.
  EXPECT_TRUE(after->provenance.nccl_observed.empty());
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

namespace {

// Sets a variable for one test and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// What a sockets-only NCCL 2.28 writes with NCCL_DEBUG=INFO, into the trial's NCCL_DEBUG_FILE when
// it asks for one: the network, one connection without GPUDirect RDMA and a TUNING line per size.
void write_socket_nccl_log(const TrialSpec& spec) {
  const auto file = spec.env.find("NCCL_DEBUG_FILE");
  if (file == spec.env.end()) return;
  std::string path = file->second;
  for (const auto& [pattern, value] : {std::pair{"%h", "node-a"}, std::pair{"%p", "4242"}})
    path.replace(path.find(pattern), 2, value);
  std::ofstream out(path, std::ios::app);
  out << "node-a:4242:4242 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
      << "node-a:4242:4250 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      << "node-a:4242:4250 [0] NCCL INFO Using network Socket\n"
      << "node-a:4242:4250 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [send] via NET/Socket/0\n";
  const auto& sweep = spec.config.sweep;
  for (double bytes = static_cast<double>(sweep.min_bytes); bytes <= static_cast<double>(sweep.max_bytes);
       bytes *= sweep.step_factor)
    out << "node-a:4242:4242 [0] NCCL INFO AllReduce: " << static_cast<std::uint64_t>(bytes)
        << " Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n";
}

}  // namespace

// tune runs the probe, the first baseline and the first confirmation round with NCCL's log in a
// private directory, and records what NCCL said: here sockets on a node with 8 ACTIVE IB ports.
TEST(TuneJob, RecordsWhatNcclSaidAndSaysSocketsWereUsed) {
  TempDir work("tune-job");
  TempDir tmp("tune-job-tmp");
  ScopedEnv tmpdir("TMPDIR", tmp.path().string());
  ModelTrials trials = model_trials("tune-one-knob.yaml");
  const TrialRunner model = trials.runner();
  int captured = 0;
  TrialRunner runner = [&](RankGroup& group, const TrialSpec& spec) {
    if (spec.env.count("NCCL_DEBUG_FILE")) ++captured;
    write_socket_nccl_log(spec);
    return model(group, spec);
  };
  const NodeLayout layout = two_emulated_nodes();
  PretendRanks group(layout);
  testing::internal::CaptureStdout();
  const int code = run_tune_job(group, layout, options(work), runner);
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0) << out;

  Result<Profile> profile = parse_profile(read_file(work / "store" / kKey / "2n.yaml"), "2n.yaml");
  ASSERT_TRUE(profile) << profile.error();
  const NcclObserved& observed = profile->provenance.nccl_observed;
  ASSERT_TRUE(observed.defaults.has_value());
  EXPECT_EQ(observed.defaults->transport, "Socket");
  EXPECT_EQ(observed.defaults->hcas, (std::vector<std::string>{"eth0"}));
  EXPECT_EQ(observed.defaults->gdr_connections, 0);
  EXPECT_EQ(observed_choice_at(*observed.defaults, "AllReduce",
                               profile->collectives.at("all_reduce").results.sizes.back()),
            "RING/SIMPLE");
  EXPECT_EQ(observed.shipped.has_value(), !profile->env.empty());
  bool says_sockets = false;
  for (const ObservedVerdict& v : observed.verdicts)
    says_sockets |= v.level == "fail" && v.check == "transport";
  EXPECT_TRUE(says_sockets) << profile_to_yaml(*profile);
  EXPECT_FALSE(observed.contradictions.empty());  // the model's Tree/LL at small sizes is not RING/SIMPLE
  EXPECT_NE(out.find("fail  transport: NCCL sends between nodes over sockets"), std::string::npos) << out;
  EXPECT_NE(out.find("NCCL chose"), std::string::npos) << out;

  // The probe, one baseline, and the defaults and the winner in the first confirmation round.
  EXPECT_EQ(captured, profile->env.empty() ? 3 : 4);
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));  // every capture directory is gone
  Result<std::vector<JournalEntry>> journal = Journal::read(work / "store" / "journal.jsonl");
  ASSERT_TRUE(journal) << journal.error();
  for (const JournalEntry& entry : *journal) EXPECT_EQ(entry.env.count("NCCL_DEBUG"), 0u);
}
