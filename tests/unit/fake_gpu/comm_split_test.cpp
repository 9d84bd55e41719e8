// ncclCommSplit in the fake NCCL (tests/fake-gpu/FIDELITY.md F21) and NcclLibrary::split: ranks in
// forked processes split their world communicator by color, and each split is a communicator of
// its own shape: its ranks in key order, its nodes counted from its ranks' hosts, its model, its
// tuner plugin's init, its INFO lines, its faults and init cost, real data through it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collectives/collective_spec.h"
#include "collectives/cuda_driver.h"
#include "collectives/nccl_library.h"
#include "collectives/size_sweep.h"
#include "comm_model.h"
#include "fake_model.h"
#include "nccl_debug.h"
#include "fake_world.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::fake;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {
namespace split_test {

using namespace fake_world;

// all_reduce sizes that cross the fake's chunks: 1000 B to 512 KB.
SweepOptions small_sweep() {
  SweepOptions options;
  options.min_bytes = 1000;
  options.max_bytes = 600000;
  options.step_factor = 8;
  options.iterations = 2;
  options.warmup = 1;
  return options;
}

// One line per size of an all_reduce sweep on `comm`: "<label> <bytes> <us> <wrong>".
void sweep(World& w, const NcclComm& comm, int rank, int nranks, const std::string& label) {
  const SweepContext context{w.cuda, w.nccl, comm, w.stream, rank, nranks};
  Result<std::vector<SizeMeasurement>> rows =
      run_size_sweep(context, *find_collective("all_reduce"), small_sweep());
  if (!rows) {
    w.report << label << " sweep-error " << rows.error() << "\n";
    return;
  }
  for (const SizeMeasurement& m : *rows)
    w.report << label << " " << m.bytes << " " << m.out_of_place_us << " "
             << m.out_of_place_wrong.value_or(-1) << "\n";
}

struct SweepRow {
  std::size_t bytes = 0;
  double us = 0;
  long wrong = -1;
};

std::vector<SweepRow> rows_labelled(const std::string& report, const std::string& label) {
  std::vector<SweepRow> rows;
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string first;
    SweepRow row;
    if (in >> first && first == label && in >> row.bytes >> row.us >> row.wrong) rows.push_back(row);
  }
  return rows;
}

// The time the fake gives one all_reduce of `bytes` on rank `rank` of a communicator whose ranks
// sit on `hosts` (emulated "-node<k>" hosts): the model resolved for its nodes and ranks per node.
double expected_us(const FakeModel& file_model, const std::vector<std::string>& hosts, int rank,
                   double bytes) {
  const CommNodes nodes = comm_nodes(hosts, rank, /*emulated=*/true);
  const int nranks = static_cast<int>(hosts.size());
  const FakeModel model = model_for_nodes(file_model, nodes.count, nranks / nodes.count);
  const FakeModel op_model = model_for_collective(model, "all_reduce");
  Result<CommModel> comm = resolve_comm_model(op_model, {}, rank, nranks, "all_reduce", nodes);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? op_time_us(op_model, *comm, "all_reduce", bytes) : 0;
}

}  // namespace split_test
}  // namespace

// commGetSplitInfo (init.cc:1455-1495 at v2.28.9): the ranks of one color, ordered by key, ties
// by parent rank; NCCL_SPLIT_NOCOLOR takes part and gets NULL; any other color, negative too, is
// a color (NCCL compares with NCCL_SPLIT_NOCOLOR only). Destroying a child leaves the parent
// working.
TEST(FakeGpuSplit, RanksOfAColorFormOneCommunicatorInKeyOrderTiesByParentRank) {
  const split_test::Body body = [](split_test::World& w) {
    Result<NcclComm> world = w.init();
    if (!world) {
      w.report << "init-error " << world.error() << "\n";
      return;
    }
    {
      // Color 1: ranks 0, 2, 3 with keys 5, 5, -1 -> 3 (key -1), 0, 2 (tie: parent order).
      const int colors[] = {1, nccl_abi::kSplitNoColor, 1, 1};
      const int keys[] = {5, 0, 5, -1};
      Result<std::optional<NcclComm>> a = w.nccl.split(*world, colors[w.rank], keys[w.rank]);
      if (!a) {
        w.report << "a error " << a.error() << "\n";
      } else if (!a->has_value()) {
        w.report << "a none\n";
      } else {
        w.report << "a " << split_test::gathered(w, **a, w.rank) << "\n";
      }
      // Colors -7 and 2, keys descending: {0, 2} -> 2, 0; {1, 3} -> 3, 1.
      const int second[] = {-7, 2, -7, 2};
      Result<std::optional<NcclComm>> b = w.nccl.split(*world, second[w.rank], -w.rank);
      if (!b || !b->has_value()) {
        w.report << "b error " << (b ? "no communicator" : b.error()) << "\n";
      } else {
        w.report << "b " << split_test::gathered(w, **b, w.rank) << "\n";
      }
    }  // the children are destroyed here, before their parent
    w.report << "world " << split_test::gathered(w, *world, 10 * w.rank) << "\n";
  };
  const split_test::Outcome out =
      split_test::run_world(4,
                            {{"NCCLTUNE_FAKE_MODEL", test_support::fixture("models/exact.yaml").string()},
                             {"NCCLTUNE_FAKE_TIMEOUT_S", "20"}},
                            body);
  const char* const expected[] = {
      "a 3,0,2\nb 2,0\nworld 0,10,20,30\n",
      "a none\nb 3,1\nworld 0,10,20,30\n",
      "a 3,0,2\nb 2,0\nworld 0,10,20,30\n",
      "a 3,0,2\nb 3,1\nworld 0,10,20,30\n",
  };
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(split_test::exited_cleanly(out.statuses[static_cast<std::size_t>(r)])) << "rank " << r;
    EXPECT_EQ(out.reports[static_cast<std::size_t>(r)], expected[r]) << "rank " << r;
  }
}

// Two emulated nodes of two ranks: the rails (color = local rank) are communicators of 2 nodes x 1
// rank, the nodes (color = node) of 1 node x 2 ranks. Each counts its nodes from its ranks' hosts
// (F18), prints its own INFO line (no version line: NCCL prints that from ncclCommInitRank only),
// calls the tuner plugin's init with its own nRanks and nNodes (F12), and moves real data, after
// its parent is gone too.
TEST(FakeGpuSplit, RailsAndNodesOfTwoEmulatedNodesAreCommunicatorsOfTheirOwnShape) {
  const TempDir logs("nccltune-split-logs");
  const split_test::Env env = {{"NCCLTUNE_FAKE_MODEL", test_support::fixture("models/exact.yaml").string()},
                               {"NCCLTUNE_FAKE_TIMEOUT_S", "20"},
                               {"NCCLTUNE_EMULATE_NODES", "2"},
                               {"NCCL_TUNER_PLUGIN", split_test::test_tuner()},
                               {"NCCL_DEBUG", "INFO"},
                               {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
                               {"NCCL_DEBUG_FILE", (logs.path() / "nccl.%p.log").string()}};
  const split_test::Body body = [](split_test::World& w) {
    std::optional<NcclComm> world;
    if (Result<NcclComm> made = w.init()) world.emplace(std::move(*made));
    if (!world) {
      w.report << "init-error\n";
      return;
    }
    const int node = w.rank / 2, local_rank = w.rank % 2;
    Result<std::optional<NcclComm>> rail = w.nccl.split(*world, local_rank, w.rank);
    Result<std::optional<NcclComm>> on_node = w.nccl.split(*world, node, w.rank);
    if (!rail || !on_node || !rail->has_value() || !on_node->has_value()) {
      w.report << "split-error " << (rail ? "" : rail.error()) << (on_node ? "" : on_node.error()) << "\n";
      return;
    }
    world.reset();  // the parent goes first: its children live on
    split_test::sweep(w, **rail, node, 2, "rail");
    split_test::sweep(w, **on_node, local_rank, 2, "node");
  };
  const split_test::Outcome out = split_test::run_world(4, env, body);
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::string& report = out.reports[static_cast<std::size_t>(r)];
    EXPECT_TRUE(split_test::exited_cleanly(out.statuses[static_cast<std::size_t>(r)])) << report;
    for (const char* label : {"rail", "node"}) {
      const std::vector<split_test::SweepRow> rows = split_test::rows_labelled(report, label);
      EXPECT_EQ(rows.size(), sweep_sizes(split_test::small_sweep()).size()) << label << "\n" << report;
      for (const split_test::SweepRow& row : rows) EXPECT_EQ(row.wrong, 0) << label << " " << row.bytes;
    }
  }
  const std::string text = split_test::logs_in(logs.path());
  // The world: 4 ranks on 2 nodes. A rail: 2 ranks, one on each node. A node: 2 ranks on one.
  EXPECT_EQ(split_test::occurrences(text, "nRanks 4 nNodes 2 localRanks 2"), 4u) << text;
  EXPECT_EQ(split_test::occurrences(text, "nRanks 2 nNodes 2 localRanks 1 localRank 0"), 4u) << text;
  EXPECT_EQ(split_test::occurrences(text, "nRanks 2 nNodes 1 localRanks 2"), 4u) << text;
  EXPECT_EQ(split_test::occurrences(text, "TUNER/fake_test: init for 4 ranks on 2 nodes"), 4u) << text;
  EXPECT_EQ(split_test::occurrences(text, "TUNER/fake_test: init for 2 ranks on 2 nodes"), 4u) << text;
  EXPECT_EQ(split_test::occurrences(text, "TUNER/fake_test: init for 2 ranks on 1 nodes"), 4u) << text;
  EXPECT_EQ(split_test::occurrences(text, "NCCL INFO NCCL version"), 1u) << text;  // the world's rank 0
}

// A `nodes` entry resolves per communicator shape (model_for_nodes with the ranks per node): one
// for 2 nodes x 1 rank applies to the rails only, not to their world of 2 x 2 nor to a node.
TEST(FakeGpuSplit, TheModelResolvesForTheSplitsOwnShape) {
  const TempDir dir("nccltune-split-model");
  const std::string path = (dir.path() / "model.yaml").string();
  write_file(path,
             read_file(test_support::fixture("models/exact.yaml")) +
                 "nodes: [{min_nodes: 2, ranks_per_node: 1, default: [{algo: Ring, proto: Simple}]}]\n");
  const split_test::Body body = [](split_test::World& w) {
    Result<NcclComm> world = w.init();
    if (!world) {
      w.report << "init-error " << world.error() << "\n";
      return;
    }
    const int node = w.rank / 2, local_rank = w.rank % 2;
    Result<std::optional<NcclComm>> rail = w.nccl.split(*world, local_rank, w.rank);
    Result<std::optional<NcclComm>> on_node = w.nccl.split(*world, node, w.rank);
    if (!rail || !on_node || !rail->has_value() || !on_node->has_value()) {
      w.report << "split-error\n";
      return;
    }
    split_test::sweep(w, *world, w.rank, 4, "world");
    split_test::sweep(w, **rail, node, 2, "rail");
    split_test::sweep(w, **on_node, local_rank, 2, "node");
  };
  const split_test::Outcome out = split_test::run_world(
      4, {{"NCCLTUNE_FAKE_MODEL", path}, {"NCCLTUNE_FAKE_TIMEOUT_S", "20"}, {"NCCLTUNE_EMULATE_NODES", "2"}},
      body);
  Result<FakeModel> model = load_fake_model(path);
  ASSERT_TRUE(model.ok()) << model.error();
  const std::vector<std::string> world_hosts = {"h-node0", "h-node0", "h-node1", "h-node1"};
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::string& report = out.reports[static_cast<std::size_t>(r)];
    EXPECT_TRUE(split_test::exited_cleanly(out.statuses[static_cast<std::size_t>(r)])) << report;
    const int node = r / 2, local_rank = r % 2;
    const std::pair<const char*, std::pair<std::vector<std::string>, int>> comms[] = {
        {"world", {world_hosts, r}},
        {"rail", {{"h-node0", "h-node1"}, node}},
        {"node", {{"h-node0", "h-node0"}, local_rank}}};
    for (const auto& [label, shape] : comms) {
      const std::vector<split_test::SweepRow> rows = split_test::rows_labelled(report, label);
      EXPECT_EQ(rows.size(), sweep_sizes(split_test::small_sweep()).size()) << label << "\n" << report;
      for (const split_test::SweepRow& row : rows) {
        const double expected =
            split_test::expected_us(*model, shape.first, shape.second, static_cast<double>(row.bytes));
        EXPECT_NEAR(row.us, expected, expected * 1e-5) << label << " " << row.bytes;
        EXPECT_EQ(row.wrong, 0) << label << " " << row.bytes;
      }
    }
    // The rails' entry changed their times: Ring/Simple at 1000 B, not the Tree/LL of the world and
    // the nodes (the model's own `default`).
    const std::vector<split_test::SweepRow> rail = split_test::rows_labelled(report, "rail");
    ASSERT_FALSE(rail.empty());
    FakeModel without_entry = *model;
    without_entry.nodes.clear();
    EXPECT_GT(rail.front().us, 2 * split_test::expected_us(without_entry, {"h-node0", "h-node1"}, node,
                                                           static_cast<double>(rail.front().bytes)));
  }
}

// Each split is a communicator's init at its own cost: the model's init_cost_ms.nccl_split is
// slept (not nccl_comm: NCCL's split loads no kernels and does no root rendezvous), and an
// init_error fault of the split's shape fails that split (ncclSystemError) and leaves the parent
// and the other splits working.
TEST(FakeGpuSplit, ASplitPaysItsSplitCostAndFailsOnItsShapesInitFault) {
  const TempDir dir("nccltune-split-fault");
  const std::string path = (dir.path() / "model.yaml").string();
  write_file(path, read_file(test_support::fixture("models/exact.yaml")) +
                       "init_cost_ms: {nccl_comm: 20, nccl_split: 300}\n"
                       "nodes: [{min_nodes: 2, ranks_per_node: 1, faults: [{fault: init_error}]}]\n");
  const split_test::Body body = [](split_test::World& w) {
    Result<NcclComm> world = w.init();
    if (!world) {
      w.report << "init-error " << world.error() << "\n";
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    Result<std::optional<NcclComm>> on_node = w.nccl.split(*world, w.rank / 2, w.rank);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    w.report << "node " << (on_node && on_node->has_value() ? "ok" : "failed") << " " << ms.count() << "\n";
    Result<std::optional<NcclComm>> rail = w.nccl.split(*world, w.rank % 2, w.rank);
    w.report << "rail " << (rail ? "ok" : rail.error()) << "\n";
    w.report << "world " << split_test::gathered(w, *world, w.rank) << "\n";
  };
  const split_test::Outcome out = split_test::run_world(
      4, {{"NCCLTUNE_FAKE_MODEL", path}, {"NCCLTUNE_FAKE_TIMEOUT_S", "20"}, {"NCCLTUNE_EMULATE_NODES", "2"}},
      body);
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::string& report = out.reports[static_cast<std::size_t>(r)];
    EXPECT_TRUE(split_test::exited_cleanly(out.statuses[static_cast<std::size_t>(r)])) << report;
    std::istringstream in(report);
    std::string word, state;
    long ms = 0;
    ASSERT_TRUE(in >> word >> state >> ms) << report;
    EXPECT_EQ(word + " " + state, "node ok") << report;
    EXPECT_GE(ms, 300) << report;  // a lower bound only: a loaded machine is slower
    EXPECT_NE(report.find("rail ncclCommSplit(color " + std::to_string(r % 2) + ", key " + std::to_string(r) +
                          "): unhandled system error"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("world 0,1,2,3\n"), std::string::npos) << report;
  }
}
