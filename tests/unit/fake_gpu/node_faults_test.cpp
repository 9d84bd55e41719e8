// The fake NCCL's node faults (tests/fake-gpu/README.md): `node` on every fault, slow_node with its
// `path`, slow_link between two nodes, and the emulated node index of each rank they name. Forked
// ranks under NCCLTUNE_EMULATE_NODES are in fake_gpu_test.cpp (FakeGpuProcesses.*Node*).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "comm_model.h"
#include "fake_model.h"
#include "fake_model_errors.h"
#include "nccl_debug.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::fake;
using nccltune::test_support::fake_model_error;

namespace {

const std::string kModel =
    "schema: nccltune/fake-model/v1\n"
    "algos: {Ring: {Simple: {lat_us: 10, busbw_gbps: 100}}}\n"
    "default: [{algo: Ring, proto: Simple}]\n";

FakeModel parse(const std::string& text) {
  Result<FakeModel> model = parse_fake_model(text, "model.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : FakeModel{};
}

FakeModel with_faults(const std::string& faults) {
  return parse(kModel + "faults:\n" + faults);
}

std::string fault_error(const std::string& fault) {
  return fake_model_error(kModel + "faults: [" + fault + "]\n");
}

CommModel resolve_on(const FakeModel& model, const CommNodes& nodes, int rank = 0, int nranks = 4) {
  Result<CommModel> comm = resolve_comm_model(model, {}, rank, nranks, "all_reduce", nodes);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

// How much slower than the healthy model one all_reduce of 1 MiB is on `nodes`.
double slowdown(const FakeModel& model, const CommNodes& nodes, int rank = 0) {
  const FakeModel healthy = parse(kModel);
  const double base = op_time_us(healthy, resolve_on(healthy, nodes, rank), "all_reduce", 1 << 20);
  return op_time_us(model, resolve_on(model, nodes, rank), "all_reduce", 1 << 20) / base;
}

// A communicator of ranks on `present` (emulated node indexes), this rank on `node`: as many
// hosts as nodes.
CommNodes on(int node, std::vector<int> present) {
  std::sort(present.begin(), present.end());
  const int count = static_cast<int>(present.size());
  return CommNodes{node, std::move(present), count};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The emulated node index

TEST(FakeGpuNodeIndex, EmulatedHostsGiveTheirSuffix) {
  // A communicator split off a job of 8 emulated nodes: world ranks 6-9 sit on nodes 3 and 4.
  const std::vector<std::string> hosts{"gpu01-node3", "gpu01-node3", "gpu01-node4", "gpu01-node4"};
  EXPECT_EQ(emulated_node_indexes(hosts, true), (std::vector<int>{3, 3, 4, 4}));
  const CommNodes nodes = comm_nodes(hosts, 2, true);
  EXPECT_EQ(nodes.node, 4);
  EXPECT_EQ(nodes.present, (std::vector<int>{3, 4}));
  EXPECT_EQ(nodes.count, 2);
  EXPECT_TRUE(nodes.holds(3));
  EXPECT_FALSE(nodes.holds(0));
  // One node alone is still that node, not node 0.
  const CommNodes alone = comm_nodes({"gpu01-node6", "gpu01-node6"}, 1, true);
  EXPECT_EQ(alone.node, 6);
  EXPECT_EQ(alone.present, (std::vector<int>{6}));
  EXPECT_EQ(alone.count, 1);
  // As process_host names them: world rank 13 of 16 on 8 nodes is on node 6.
  EXPECT_EQ(emulated_node_indexes({process_host("gpu01.cluster", "8", 13, 16)}, true), (std::vector<int>{6}));
}

TEST(FakeGpuNodeIndex, WithoutEmulationHostsCountInOrderOfFirstAppearance) {
  EXPECT_EQ(emulated_node_indexes({"b", "a", "b", "c"}, false), (std::vector<int>{0, 1, 0, 2}));
  const CommNodes nodes = comm_nodes({"b", "a", "b", "c"}, 3, false);
  EXPECT_EQ(nodes.node, 2);
  EXPECT_EQ(nodes.present, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(nodes.count, 3);
  // A real host named like an emulated one is a host like any other without emulation.
  EXPECT_EQ(emulated_node_indexes({"gpu-node7", "gpu-node7", "gpu-node2"}, false),
            (std::vector<int>{0, 0, 1}));
  // A suffix that is not a number: the host's place.
  EXPECT_EQ(emulated_node_indexes({"x-node", "x-nodeA", "x-node-1"}, true), (std::vector<int>{0, 1, 2}));
  // One host: node 0, as the default CommNodes.
  const CommNodes one = comm_nodes({"h", "h"}, 1, false);
  const CommNodes fallback;
  EXPECT_EQ(one.node, fallback.node);
  EXPECT_EQ(one.present, fallback.present);
  EXPECT_EQ(one.count, fallback.count);
}

// ---------------------------------------------------------------------------------------------
// Parsing

TEST(FakeGpuNodeFaults, ParseEveryNewKey) {
  const FakeModel model = with_faults(
      "  - {fault: slow_node, node: 3, factor: 1.6, path: network}\n"
      "  - {fault: slow_link, nodes: [2, 5], factor: 2.0}\n"
      "  - {fault: hang, node: 6}\n"
      "  - {fault: slow_node}\n"
      "  - {fault: crash, node: 1, rank: 0}\n");
  ASSERT_EQ(model.faults.size(), 5u);
  EXPECT_EQ(model.faults[0].kind, FaultKind::slow_node);
  EXPECT_EQ(model.faults[0].node, 3);
  EXPECT_EQ(model.faults[0].factor, 1.6);
  EXPECT_EQ(model.faults[0].path, FaultPath::network);
  EXPECT_EQ(model.faults[1].kind, FaultKind::slow_link);
  EXPECT_EQ(model.faults[1].link, (std::pair<int, int>{2, 5}));
  EXPECT_EQ(model.faults[1].factor, 2.0);
  EXPECT_FALSE(model.faults[1].node.has_value());
  EXPECT_EQ(model.faults[2].kind, FaultKind::hang);
  EXPECT_EQ(model.faults[2].node, 6);
  EXPECT_FALSE(model.faults[3].node.has_value());
  EXPECT_EQ(model.faults[3].path, FaultPath::any);
  EXPECT_EQ(model.faults[3].factor, 2) << "slow_rank's default";
  EXPECT_EQ(model.faults[4].node, 1);
  EXPECT_EQ(model.faults[4].rank, 0);
  EXPECT_EQ(with_faults("  - {fault: slow_node, path: local}\n").faults.at(0).path, FaultPath::local);
  EXPECT_EQ(with_faults("  - {fault: slow_node, path: any}\n").faults.at(0).path, FaultPath::any);
  EXPECT_TRUE(only_slows(FaultKind::slow_node));
  EXPECT_TRUE(only_slows(FaultKind::slow_link));
  EXPECT_FALSE(only_slows(FaultKind::hang));
}

TEST(FakeGpuNodeFaults, BadInputsNameTheField) {
  EXPECT_EQ(fault_error("{fault: slow_node, nod: 3}"), "model.yaml:4: faults[0]: unknown key 'nod'");
  EXPECT_EQ(fault_error("{fault: slow_nodes}"),
            "model.yaml:4: faults[0].fault: unknown fault 'slow_nodes' (init_error, hang, crash, corrupt, "
            "slow_rank, slow_node, slow_link or late_rank)");
  EXPECT_EQ(fault_error("{fault: slow_node, path: wan}"),
            "model.yaml:4: faults[0].path: unknown path 'wan' (any, network or local)");
  EXPECT_EQ(fault_error("{fault: slow_node, path: Network}"),
            "model.yaml:4: faults[0].path: unknown path 'Network' (any, network or local)");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [1, 2], path: network}"),
            "model.yaml:4: faults[0].path: only slow_node takes a path");
  EXPECT_EQ(fault_error("{fault: hang, node: 1, path: local}"),
            "model.yaml:4: faults[0].path: only slow_node takes a path");
  EXPECT_EQ(fault_error("{fault: slow_link}"), "model.yaml:4: faults[0].nodes: missing");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: 3}"), "model.yaml:4: faults[0].nodes: must be a list");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [3]}"),
            "model.yaml:4: faults[0].nodes: must list two nodes");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [1, 2, 3]}"),
            "model.yaml:4: faults[0].nodes: must list two nodes");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [2, 2]}"),
            "model.yaml:4: faults[0].nodes: names node 2 twice");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [1, -1]}"),
            "model.yaml:4: faults[0].nodes[1]: -1 is outside 0..1073741824");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [a, 1]}"),
            "model.yaml:4: faults[0].nodes[0]: must be a whole number");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [1, 2], node: 1}"),
            "model.yaml:4: faults[0].node: slow_link names its two nodes in 'nodes'");
  EXPECT_EQ(fault_error("{fault: slow_node, nodes: [1, 2]}"),
            "model.yaml:4: faults[0].nodes: only slow_link takes nodes");
  EXPECT_EQ(fault_error("{fault: hang, nodes: [1, 2]}"),
            "model.yaml:4: faults[0].nodes: only slow_link takes nodes");
  EXPECT_EQ(fault_error("{fault: hang, node: -2}"),
            "model.yaml:4: faults[0].node: -2 is outside 0..1073741824");
  EXPECT_EQ(fault_error("{fault: slow_node, node: x}"),
            "model.yaml:4: faults[0].node: must be a whole number");
  EXPECT_EQ(fault_error("{fault: slow_node, factor: 0}"), "model.yaml:4: faults[0].factor: must be above 0");
  EXPECT_EQ(fault_error("{fault: slow_link, nodes: [0, 1], factor: -2}"),
            "model.yaml:4: faults[0].factor: must be above 0");
  // The same in a collectives entry and a nodes entry.
  EXPECT_EQ(
      fake_model_error(kModel + "collectives: {all_gather: {faults: [{fault: slow_link, nodes: [4]}]}}\n"),
      "model.yaml:4: collectives.all_gather.faults[0].nodes: must list two nodes");
  EXPECT_EQ(fake_model_error(kModel + "nodes: [{min_nodes: 2, faults: [{fault: slow_node, path: far}]}]\n"),
            "model.yaml:4: nodes[0].faults[0].path: unknown path 'far' (any, network or local)");
  EXPECT_EQ(
      fake_model_error(
          kModel +
          "nodes: [{min_nodes: 2, collectives: {reduce: {faults: [{fault: crash, nodes: [0, 1]}]}}}]\n"),
      "model.yaml:4: nodes[0].collectives.reduce.faults[0].nodes: only slow_link takes nodes");
}

// ---------------------------------------------------------------------------------------------
// Resolving

TEST(FakeGpuNodeFaults, SlowNodeFollowsItsPath) {
  const FakeModel network = with_faults("  - {fault: slow_node, node: 3, factor: 1.6, path: network}\n");
  const FakeModel local = with_faults("  - {fault: slow_node, node: 3, factor: 1.6, path: local}\n");
  const FakeModel any = with_faults("  - {fault: slow_node, node: 3, factor: 1.6}\n");
  const CommNodes pair = on(3, {3, 4});
  const CommNodes alone = on(3, {3});
  // network: communicators of more than one node that hold node 3.
  EXPECT_DOUBLE_EQ(slowdown(network, pair), 1.6);
  EXPECT_TRUE(resolve_on(network, pair).has(FaultKind::slow_node));
  EXPECT_DOUBLE_EQ(slowdown(network, alone), 1);
  EXPECT_TRUE(resolve_on(network, alone).faults.empty());
  // local: node 3 alone only.
  EXPECT_DOUBLE_EQ(slowdown(local, pair), 1);
  EXPECT_DOUBLE_EQ(slowdown(local, alone), 1.6);
  // any: both.
  EXPECT_DOUBLE_EQ(slowdown(any, pair), 1.6);
  EXPECT_DOUBLE_EQ(slowdown(any, alone), 1.6);
  // The path is NCCL's node count (hosts), not the number of emulated indexes.
  EXPECT_DOUBLE_EQ(slowdown(network, CommNodes{3, {3}, 2}), 1.6);
  EXPECT_DOUBLE_EQ(slowdown(local, CommNodes{3, {3}, 2}), 1);
}

TEST(FakeGpuNodeFaults, SlowNodeSlowsEveryRankOfACommunicatorThatHoldsTheNode) {
  const FakeModel model = with_faults("  - {fault: slow_node, node: 3, factor: 1.6, path: network}\n");
  // Every rank of the pair (3, 4), the ones on node 4 too: the collective waits for node 3.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_DOUBLE_EQ(slowdown(model, on(rank < 2 ? 3 : 4, {3, 4}), rank), 1.6);
  // Communicators without node 3 are healthy, whatever their size.
  EXPECT_DOUBLE_EQ(slowdown(model, on(1, {1, 2})), 1);
  EXPECT_DOUBLE_EQ(slowdown(model, on(0, {0, 1, 2, 4, 5, 6, 7})), 1);
  EXPECT_DOUBLE_EQ(slowdown(model, CommNodes{}), 1) << "one host, node 0";
  // The whole fleet holds it.
  EXPECT_DOUBLE_EQ(slowdown(model, on(7, {0, 1, 2, 3, 4, 5, 6, 7})), 1.6);
  // Without `node`: every communicator on its path.
  const FakeModel everywhere = with_faults("  - {fault: slow_node, factor: 3, path: network}\n");
  EXPECT_DOUBLE_EQ(slowdown(everywhere, on(1, {1, 2})), 3);
  EXPECT_DOUBLE_EQ(slowdown(everywhere, on(1, {1})), 1);
  EXPECT_DOUBLE_EQ(slowdown(with_faults("  - {fault: slow_node}\n"), CommNodes{}), 2) << "default factor";
}

TEST(FakeGpuNodeFaults, SlowLinkNeedsBothEndsAndFactorsMultiply) {
  const FakeModel link = with_faults("  - {fault: slow_link, nodes: [1, 5], factor: 2.0}\n");
  EXPECT_DOUBLE_EQ(slowdown(link, on(1, {1, 5})), 2);
  EXPECT_DOUBLE_EQ(slowdown(link, on(5, {1, 5}), 3), 2);
  EXPECT_TRUE(resolve_on(link, on(1, {1, 5})).has(FaultKind::slow_link));
  EXPECT_DOUBLE_EQ(slowdown(link, on(1, {1, 2})), 1);
  EXPECT_DOUBLE_EQ(slowdown(link, on(5, {4, 5})), 1);
  EXPECT_DOUBLE_EQ(slowdown(link, on(1, {1})), 1);
  EXPECT_TRUE(resolve_on(link, on(1, {1, 2})).faults.empty());
  EXPECT_DOUBLE_EQ(slowdown(link, on(0, {0, 1, 2, 5})), 2) << "a larger communicator holding both";
  // Several factors multiply: the node, the link and a slow rank.
  const FakeModel all = with_faults(
      "  - {fault: slow_node, node: 3, factor: 1.6, path: network}\n"
      "  - {fault: slow_link, nodes: [1, 5], factor: 2.0}\n"
      "  - {fault: slow_rank, rank: 2, factor: 1.5}\n");
  EXPECT_DOUBLE_EQ(slowdown(all, on(1, {1, 3, 5}), 0), 1.6 * 2.0);
  EXPECT_DOUBLE_EQ(slowdown(all, on(5, {1, 3, 5}), 2), 1.6 * 2.0 * 1.5);
  EXPECT_DOUBLE_EQ(slowdown(all, on(1, {1, 5}), 0), 2.0);
  EXPECT_DOUBLE_EQ(slowdown(all, on(3, {3, 4}), 0), 1.6);
}

TEST(FakeGpuNodeFaults, NodeLimitsEveryKindToThatNodesRanks) {
  const FakeModel hang = with_faults("  - {fault: hang, node: 6}\n");
  EXPECT_TRUE(resolve_on(hang, on(6, {5, 6}), 2).has(FaultKind::hang));
  EXPECT_FALSE(resolve_on(hang, on(5, {5, 6}), 0).has(FaultKind::hang)) << "its partner's ranks do not";
  EXPECT_TRUE(resolve_on(hang, on(6, {6})).has(FaultKind::hang)) << "in every communicator it joins";
  EXPECT_FALSE(resolve_on(hang, CommNodes{}).has(FaultKind::hang));
  for (const auto& [name, kind] :
       std::vector<std::pair<std::string, FaultKind>>{{"init_error", FaultKind::init_error},
                                                      {"crash", FaultKind::crash},
                                                      {"corrupt", FaultKind::corrupt}}) {
    const FakeModel model = with_faults("  - {fault: " + name + ", node: 2}\n");
    EXPECT_TRUE(resolve_on(model, on(2, {1, 2})).has(kind)) << name;
    EXPECT_FALSE(resolve_on(model, on(1, {1, 2})).has(kind)) << name;
  }
  const FakeModel slow = with_faults("  - {fault: slow_rank, node: 2, factor: 3}\n");
  EXPECT_DOUBLE_EQ(slowdown(slow, on(2, {1, 2})), 3);
  EXPECT_DOUBLE_EQ(slowdown(slow, on(1, {1, 2})), 1) << "slow_rank stays on its own ranks";
  // `rank` and `node` together: both must hold.
  const FakeModel both = with_faults("  - {fault: crash, node: 2, rank: 3}\n");
  EXPECT_TRUE(resolve_on(both, on(2, {1, 2}), 3).has(FaultKind::crash));
  EXPECT_FALSE(resolve_on(both, on(2, {1, 2}), 2).has(FaultKind::crash));
  EXPECT_FALSE(resolve_on(both, on(1, {1, 2}), 3).has(FaultKind::crash));
  // A `when` still has to hold.
  const FakeModel when = with_faults("  - {when: {NCCL_PROTO: Simple}, fault: hang, node: 0}\n");
  EXPECT_FALSE(resolve_on(when, CommNodes{}).has(FaultKind::hang));
  const auto hangs = [&](const CommNodes& nodes) {
    Result<CommModel> comm = resolve_comm_model(when, {{"NCCL_PROTO", "Simple"}}, 0, 4, "all_reduce", nodes);
    EXPECT_TRUE(comm.ok()) << comm.error();
    return comm.ok() && comm->has(FaultKind::hang);
  };
  EXPECT_TRUE(hangs(CommNodes{}));
  EXPECT_FALSE(hangs(on(1, {0, 1})));
}

TEST(FakeGpuNodeFaults, CollectivesAndNodesEntriesCarryThem) {
  const FakeModel model = parse(kModel +
                                "collectives:\n"
                                "  all_gather: {faults: [{fault: slow_link, nodes: [0, 1], factor: 4}]}\n"
                                "nodes:\n"
                                "  - min_nodes: 2\n"
                                "    faults: [{fault: slow_node, node: 1, factor: 3, path: network}]\n");
  const CommNodes pair = on(0, {0, 1});
  const auto time = [&](std::string_view op, const CommNodes& nodes) {
    const FakeModel op_model = model_for_collective(model, op, nodes.count);
    Result<CommModel> comm = resolve_comm_model(op_model, {}, 0, 4, op, nodes);
    EXPECT_TRUE(comm.ok()) << comm.error();
    return op_time_us(op_model, *comm, op, 1 << 20);
  };
  const FakeModel plain = parse(kModel);
  const auto healthy = [&](std::string_view op) {
    return op_time_us(plain, *resolve_comm_model(plain, {}, 0, 4, op), op, 1 << 20);
  };
  // all_gather's entry replaces the faults: its link, not the node entry's slow node.
  EXPECT_DOUBLE_EQ(time("all_gather", pair), 4 * healthy("all_gather"));
  // all_reduce on two nodes: the nodes entry's slow node; on one node, no entry, no fault.
  EXPECT_DOUBLE_EQ(time("all_reduce", pair), 3 * healthy("all_reduce"));
  EXPECT_DOUBLE_EQ(time("all_reduce", on(1, {1})), healthy("all_reduce"));
}

// The fleet survey's models (tests/fixtures/models/fleet-*.yaml): 8 nodes of 2 GPUs.
TEST(FakeGpuNodeFaults, FleetFixturesSlowAndHangTheNodesTheyName) {
  const auto load = [](const std::string& name) {
    Result<FakeModel> model = load_fake_model(test_support::fixture("models/" + name).string());
    EXPECT_TRUE(model.ok()) << model.error();
    return model.ok() ? *model : FakeModel{};
  };
  const FakeModel healthy = load("fleet-healthy.yaml");
  const FakeModel faulty = load("fleet-slow-node-link.yaml");
  const FakeModel hang = load("fleet-hang.yaml");
  EXPECT_TRUE(healthy.faults.empty());
  EXPECT_EQ(healthy.noise.cv, 0.04);
  EXPECT_EQ(faulty.noise.cv, 0.04);
  const auto factor = [](const FakeModel& model, const CommNodes& nodes) {
    const FakeModel resolved = model_for_collective(model, "all_reduce", nodes.count);
    Result<CommModel> comm = resolve_comm_model(resolved, {}, 0, 4, "all_reduce", nodes);
    EXPECT_TRUE(comm.ok()) << comm.error();
    return comm.ok() ? comm->slow_factor : 0;
  };
  for (int a = 0; a < 8; ++a) {
    EXPECT_EQ(factor(healthy, on(a, {a})), 1);
    EXPECT_EQ(factor(faulty, on(a, {a})), 1) << "node " << a << " alone: slow_node is network only";
    for (int b = a + 1; b < 8; ++b) {
      const double expected = (a == 3 || b == 3 ? 1.6 : 1) * (a == 1 && b == 5 ? 2.0 : 1);
      EXPECT_DOUBLE_EQ(factor(faulty, on(a, {a, b})), expected) << a << "," << b;
      EXPECT_DOUBLE_EQ(factor(hang, on(a, {a, b})), expected) << a << "," << b;
      EXPECT_EQ(factor(healthy, on(a, {a, b})), 1);
    }
  }
  // Healthy bandwidth is realistic: tens of GB/s between nodes at 256 MiB.
  const FakeModel pair = model_for_collective(healthy, "all_reduce", 2);
  const double us = op_time_us(pair, *resolve_comm_model(pair, {}, 0, 4, "all_reduce", on(0, {0, 1})),
                               "all_reduce", 256.0 * (1 << 20));
  const double busbw = 256.0 * (1 << 20) / (us * 1e-6) / 1e9 * busbw_factor("all_reduce", 4);
  EXPECT_GT(busbw, 10);
  EXPECT_LT(busbw, 100);
  // Only node 6's ranks hang, alone or paired.
  for (int node = 0; node < 8; ++node) {
    Result<CommModel> comm = resolve_comm_model(model_for_collective(hang, "all_reduce", 2), {}, 0, 4,
                                                "all_reduce", on(node, {node, node == 7 ? 0 : node + 1}));
    ASSERT_TRUE(comm.ok());
    EXPECT_EQ(comm->has(FaultKind::hang), node == 6) << node;
  }
  EXPECT_TRUE(resolve_on(model_for_collective(hang, "all_reduce", 1), on(6, {6})).has(FaultKind::hang));
  EXPECT_FALSE(resolve_on(model_for_collective(hang, "all_reduce", 2), on(7, {6, 7})).has(FaultKind::hang));
}
