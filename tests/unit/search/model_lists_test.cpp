// NCCL reads NCCL_ALGO / NCCL_PROTO as a filter: among the pairs a list leaves, its cost model
// still chooses, so a list that allows NCCL's own choice changes nothing. On every fake-GPU model
// of tests/fixtures/models, the model executor (what the strategy and its benchmark measure on)
// must give such a list exactly the defaults' numbers, per collective and size. The same holds on
// the fake NCCL in forked ranks (fake_gpu_test.cpp, FakeGpuProcesses).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fake_model.h"
#include "model_executor.h"
#include "model_fixtures.h"
#include "profile/nccl_names.h"
#include "search/trial.h"

namespace nccltune {
namespace {

using test_support::kRanks;

const std::vector<std::string> kOps{"all_reduce", "all_gather", "reduce_scatter",
                                    "alltoall",   "broadcast",  "reduce"};

std::vector<std::filesystem::path> model_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(NCCLTUNE_FIXTURES) + "/models"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

// Lists that allow the default pair of every collective at every size: every algorithm and
// protocol the model knows; only those NCCL's own choices use (its `default` table, or with
// `nccl_model` the pairs it runs at the sizes measured: the cheapest in NCCL's model, which a list
// that keeps them cannot change); and the latter per collective in NCCL 2.24's scoped form.
std::vector<Env> lists_allowing_the_defaults(const fake::FakeModel& model, const std::vector<std::uint64_t>& sizes) {
  std::set<std::string> every_algo, every_proto, used_algos, used_protos;
  std::string scoped_algo, scoped_proto;
  for (const std::string& op : kOps) {
    const fake::FakeModel op_model = fake::model_for_collective(model, op);
    std::set<std::string> op_algos, op_protos;
    for (const auto& [algo, costs] : op_model.algos) {
      every_algo.insert(algo);
      for (const auto& [proto, cost] : costs.protos) every_proto.insert(proto);
    }
    for (const fake::DefaultChoice& choice : op_model.defaults) {
      op_algos.insert(choice.algo);
      op_protos.insert(choice.proto);
    }
    if (op_model.defaults.empty())  // `nccl_model`: what NCCL runs at each size
      for (const std::uint64_t bytes : sizes)
        if (const auto own = test_support::model_point(model, {}, kRanks, bytes, op)) {
          op_algos.insert(own->algo);
          op_protos.insert(own->proto);
        }
    used_algos.insert(op_algos.begin(), op_algos.end());
    used_protos.insert(op_protos.begin(), op_protos.end());
    if (const auto function = nccl_function_name(op)) {
      scoped_algo += (scoped_algo.empty() ? "" : ";") + std::string(*function) + ":" + joined(op_algos);
      scoped_proto += (scoped_proto.empty() ? "" : ";") + std::string(*function) + ":" + joined(op_protos);
    }
  }
  return {{{"NCCL_ALGO", joined(every_algo)}, {"NCCL_PROTO", joined(every_proto)}},
          {{"NCCL_ALGO", joined(used_algos)}, {"NCCL_PROTO", joined(used_protos)}},
          {{"NCCL_ALGO", joined(used_algos) + ";" + scoped_algo},
           {"NCCL_PROTO", joined(used_protos) + ";" + scoped_proto}}};
}

TEST(ModelLists, AListThatAllowsTheDefaultPairMeasuresAsTheDefaults) {
  const std::vector<std::filesystem::path> files = model_files();
  ASSERT_GE(files.size(), 10u);
  for (const auto& file : files) {
    Result<fake::FakeModel> loaded = fake::load_fake_model(file.string());
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    fake::FakeModel noiseless = *loaded;
    noiseless.noise.cv = 0;  // the executor's noise depends on the env: compare the model itself
    const test_support::ModelExecutor executor(noiseless, kRanks);
    TrialRequest defaults;
    defaults.grid = SizeGrid{8, 1u << 30, 4};
    defaults.iterations = 2;
    defaults.collectives = kOps;
    const TrialMeasurement baseline = executor(defaults);
    for (const Env& lists : lists_allowing_the_defaults(*loaded, grid_sizes(defaults.grid))) {
      SCOPED_TRACE(file.filename().string() + " NCCL_ALGO=" + lists.at("NCCL_ALGO") +
                   " NCCL_PROTO=" + lists.at("NCCL_PROTO"));
      TrialRequest listed = defaults;
      listed.env = lists;
      const TrialMeasurement measured = executor(listed);
      ASSERT_EQ(measured.outcome, baseline.outcome) << measured.reason;
      if (baseline.outcome != TrialOutcome::ok) continue;  // a model whose defaults fault
      ASSERT_EQ(measured.busbw.size(), baseline.busbw.size());
      for (std::size_t i = 0; i < baseline.busbw.size(); ++i) {
        EXPECT_DOUBLE_EQ(measured.busbw[i], baseline.busbw[i])
            << baseline.ops[i] << " " << baseline.sizes[i] << " B";
        const auto point =
            test_support::model_point(*loaded, lists, kRanks, baseline.sizes[i], baseline.ops[i]);
        const auto own = test_support::model_point(*loaded, {}, kRanks, baseline.sizes[i], baseline.ops[i]);
        ASSERT_TRUE(point && own);
        EXPECT_EQ(point->algo + "/" + point->proto, own->algo + "/" + own->proto)
            << baseline.ops[i] << " " << baseline.sizes[i] << " B";
      }
    }
  }
}

}  // namespace
}  // namespace nccltune
