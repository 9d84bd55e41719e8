// The confirmation of what the tuner plugin delivers (tune/plugin_rounds.h), on the off-grid crossover model
// (tests/fixtures/models/tune-off-grid-crossover.yaml): the profile the final grid builds serves
// Tree/LL128 from 16K to 4M - 1, though NCCL's own Ring/LL128 overtakes it near 1.1M. The A/B
// rounds measure off the grid inside every served range as well, find the loss at 1.5M and 3M,
// and cut the range back: a 3 MiB job runs NCCL's own choice, a 1 MiB job keeps Tree/LL128.
//
// The trials are answered from the model without noise, as the fake NCCL with nccltune's tuner
// plugin would run them: the defaults run NCCL's own choice; under the plugin a size a range of
// the profile covers runs that range's pair, any other NCCL's own.
#include "tune/plugin_rounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fake_model.h"
#include "model_executor.h"
#include "profile/size_ranges.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::test_support;

namespace {

constexpr int kOffGridNodes = 2, kOffGridRanks = 16;  // as the model's comment counts them
constexpr std::uint64_t kMiB = 1u << 20;

fake::FakeModel off_grid_model() {
  Result<fake::FakeModel> model = fake::load_fake_model(fixture("models/tune-off-grid-crossover.yaml").string());
  EXPECT_TRUE(model) << model.error();
  return model ? fake::model_for_nodes(*model, kOffGridNodes, kOffGridRanks / kOffGridNodes) : fake::FakeModel{};
}

// Trials of the rounds, answered from the model, each request kept.
struct PluginModelTrials {
  fake::FakeModel model;
  std::vector<TrialRequest> requests;

  TrialMeasurement operator()(const TrialRequest& request) {
    requests.push_back(request);
    std::optional<Profile> served;
    if (!request.plugin_profile.empty()) {
      Result<Profile> parsed = parse_profile(request.plugin_profile, "the profile being tuned");
      EXPECT_TRUE(parsed) << parsed.error();
      if (parsed) served = *parsed;
    }
    TrialMeasurement m;
    for (const std::string& op : request.collectives)
      for (const std::uint64_t bytes : request_sizes(request)) {
        Env env = request.env;
        const SizeChoice* range = nullptr;
        if (served)
          if (const CollectiveProfile* collective = served->collective(op))
            range = choice_for_size(collective->per_size, bytes);
        if (range != nullptr) {  // the plugin forces the range's pair
          env["NCCL_ALGO"] = range->algo;
          env["NCCL_PROTO"] = range->proto;
        }
        const std::optional<ModelPoint> point = model_point(model, env, kOffGridRanks, bytes, op);
        EXPECT_TRUE(point.has_value()) << op << " " << bytes;
        m.ops.push_back(op);
        m.sizes.push_back(bytes);
        m.time_us.push_back(point ? point->time_us : 0);
        m.busbw.push_back(point ? point->busbw : 0);
        if (served) m.plugin_served.push_back(range != nullptr ? 1 : 0);
      }
    return m;
  }
};

// The per_size ranges the final grid gives: the fastest pair of the model at each grid size.
std::vector<SizeChoice> grid_per_size(const fake::FakeModel& model, const std::vector<std::uint64_t>& grid) {
  std::vector<SizeChoice> best;
  for (const std::uint64_t bytes : grid) {
    SizeChoice fastest;
    double fastest_us = 0;
    for (const char* algo : {"Ring", "Tree"})
      for (const char* proto : {"LL", "LL128", "Simple"}) {
        const auto point = model_point(model, {{"NCCL_ALGO", algo}, {"NCCL_PROTO", proto}}, kOffGridRanks, bytes);
        if (point && (fastest_us == 0 || point->time_us < fastest_us)) {
          fastest_us = point->time_us;
          fastest.algo = algo;
          fastest.proto = proto;
        }
      }
    best.push_back(fastest);
  }
  return size_ranges(grid, best);
}

bool serves(const std::vector<SizeChoice>& per_size, std::uint64_t bytes, const std::string& algo,
            const std::string& proto) {
  const SizeChoice* range = choice_for_size(per_size, bytes);
  return range != nullptr && range->algo == algo && range->proto == proto;
}

std::string read_all(std::FILE* file) {
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) text += static_cast<char>(c);
  return text;
}

}  // namespace

TEST(PluginRounds, SizesOffTheGridCutBackARangeThatLosesBetweenGridPoints) {
  PluginModelTrials trials{off_grid_model(), {}};
  TuneOptions o;
  o.tuner_plugin = "libnccl-tuner-nccltune.so";  // any: the trials here answer for it
  o.strategy.guards = {"all_gather"};            // measured alongside, and divided among the ranks
  const std::vector<std::uint64_t> grid = grid_sizes(o.strategy.final_grid);

  Profile profile;
  profile.shape.node_type_key = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";
  profile.shape.nodes = kOffGridNodes;
  profile.shape.gpus_per_node = kOffGridRanks / kOffGridNodes;
  profile.shape.ranks = kOffGridRanks;
  CollectiveProfile& ar = profile.collectives["all_reduce"];
  ar.per_size = grid_per_size(trials.model, grid);
  ar.results.sizes = grid;
  profile.collectives["all_gather"].guard = true;
  profile.collectives["all_gather"].results.sizes = grid;
  // The grid's profile serves Tree/LL128 to 4M - 1: at 3 MiB, against NCCL's faster Ring/LL128.
  ASSERT_TRUE(serves(ar.per_size, 3 * kMiB, "Tree", "LL128"));
  ASSERT_EQ(choice_for_size(ar.per_size, 3 * kMiB)->max_bytes, 4 * kMiB - 1);

  StrategyResult summary;
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TuneConsole console(out, ProgressStyle::log);
  confirm_with_plugin(o, std::ref(trials), profile, summary, console);
  const std::string said = read_all(out);
  std::fclose(out);

  // A cut, then rounds again on what is left: two sets of A/B rounds, as many as before.
  ASSERT_EQ(trials.requests.size(), static_cast<std::size_t>(2 * 2 * o.strategy.confirm_rounds));
  const std::set<std::uint64_t> on_grid(grid.begin(), grid.end());
  for (std::size_t i = 0; i < trials.requests.size(); i += 2) {
    const TrialRequest& a = trials.requests[i];
    const TrialRequest& b = trials.requests[i + 1];
    EXPECT_TRUE(a.plugin_profile.empty());
    EXPECT_FALSE(b.plugin_profile.empty());
    EXPECT_EQ(a.sizes, b.sizes) << "the defaults and the plugin at the same sizes";
    for (const std::uint64_t bytes : grid)
      EXPECT_TRUE(std::binary_search(a.sizes.begin(), a.sizes.end(), bytes)) << "grid size " << bytes;
    // all_gather divides a size among 16 ranks of 4-byte floats: every size off the grid is whole
    // for it, so each collective measures the size asked for.
    for (const std::uint64_t bytes : a.sizes) {
      if (on_grid.count(bytes) == 0) {
        EXPECT_EQ(bytes % (4 * kOffGridRanks), 0u) << bytes;
      }
    }
  }
  // The first rounds measure Tree/LL128's range at 1.5x and 3x of 1M, where it loses.
  const std::vector<std::uint64_t>& first = trials.requests.front().sizes;
  EXPECT_TRUE(std::binary_search(first.begin(), first.end(), 3 * kMiB / 2));
  EXPECT_TRUE(std::binary_search(first.begin(), first.end(), 3 * kMiB));

  // A 3 MiB job runs NCCL's own choice; up to 1M the gain of Tree/LL128 stays.
  const std::vector<SizeChoice>& per_size = profile.collectives["all_reduce"].per_size;
  EXPECT_FALSE(serves(per_size, 3 * kMiB, "Tree", "LL128"));
  EXPECT_FALSE(serves(per_size, 3 * kMiB / 2, "Tree", "LL128"));
  EXPECT_TRUE(serves(per_size, 1 * kMiB, "Tree", "LL128"));
  EXPECT_TRUE(serves(per_size, 512 * 1024, "Tree", "LL128"));

  // What was cut is said, and recorded; the curve is the grid's.
  EXPECT_NE(said.find("per-size choice cut back, slower than the defaults under the plugin: all_reduce "
                      "16384..4194303 Tree/LL128 cut back to 16384.."),
            std::string::npos)
      << said;
  const CollectiveProfile& recorded = profile.collectives["all_reduce"];
  EXPECT_EQ(recorded.results.with_plugin.size(), grid.size());
  EXPECT_EQ(recorded.plugin.status, PluginStatus::confirmed) << recorded.plugin.why;
  EXPECT_NE(recorded.plugin.why.find("16384..4194303 Tree/LL128 cut back to 16384.."), std::string::npos)
      << recorded.plugin.why;
  EXPECT_EQ(summary.trials, static_cast<int>(trials.requests.size()));
}
