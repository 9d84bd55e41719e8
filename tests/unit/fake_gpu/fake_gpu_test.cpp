// The fake GPU stack (tests/fake-gpu): the model file, the NCCL_* reading, the timing formula,
// the libraries loaded by path as the product loads them, and real ranks in forked processes
// that reduce data through shared memory, with every fault.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/collective_spec.h"
#include "collectives/cuda_driver.h"
#include "collectives/nccl_info_log.h"
#include "collectives/nccl_library.h"
#include "collectives/size_sweep.h"
#include "comm_model.h"
#include "fake_model.h"
#include "fake_model_errors.h"
#include "nccl_debug.h"
#include "nccl_env.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::fake;
using nccltune::test_support::fake_model_error;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {

// tests/fixtures/models/<name>.
std::string model_fixture(const std::string& name) {
  return test_support::fixture("models/" + name).string();
}

FakeModel load_fixture(const std::string& name) {
  Result<FakeModel> model = load_fake_model(model_fixture(name));
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : FakeModel{};
}

CommModel resolve(const FakeModel& model, const NcclEnv& env, int rank = 0, int nranks = 8,
                  std::string_view op = "all_reduce") {
  Result<CommModel> comm = resolve_comm_model(model, env, rank, nranks, op);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

// 8 ranks on 2 nodes: the network's knobs (NCCL_IB_*) act only past one node (FIDELITY.md F30).
CommModel resolve_on_two_nodes(const FakeModel& model, const NcclEnv& env) {
  CommNodes nodes;
  nodes.present = {0, 1};
  nodes.count = 2;
  Result<CommModel> comm = resolve_comm_model(model, env, 0, 8, "all_reduce", nodes);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

AlgoProto choice(const FakeModel& model, const NcclEnv& env, double bytes,
                 std::string_view op = "all_reduce") {
  return choose_algo_proto(model, resolve(model, env), op, bytes);
}

const std::string kMinimal =
    "schema: nccltune/fake-model/v1\nalgos: {Ring: {Simple: {lat_us: 10, busbw_gbps: 100}}}\n";

// Runs `call` with stderr going to a file; returns what it wrote.
std::string capture_stderr(const std::function<void()>& call) {
  const TempDir dir("nccltune-fake-test");
  const std::string sink = (dir / "stderr").string();
  write_file(sink, "");
  std::fflush(stderr);
  const int saved = dup(2);
  const int fd = open(sink.c_str(), O_WRONLY | O_TRUNC);
  dup2(fd, 2);
  close(fd);
  call();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  return read_file(sink);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The model file

TEST(FakeGpuModel, ParsesTheDesignExample) {
  const FakeModel model = load_fixture("dgx-h100.yaml");
  ASSERT_EQ(model.devices.size(), 1u);
  EXPECT_EQ(model.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(model.devices[0].pci, "0000:18:00.0");
  EXPECT_EQ(model.devices[0].sm, 90);
  EXPECT_EQ(model.device_count, 8);
  EXPECT_EQ(model.nccl_version, 22809);
  ASSERT_EQ(model.defaults.size(), 3u);
  EXPECT_EQ(model.defaults[0].max_bytes, 65536);
  EXPECT_EQ(model.defaults[0].algo, "Tree");
  EXPECT_EQ(model.defaults[0].proto, "LL");
  EXPECT_FALSE(model.defaults[2].max_bytes.has_value());
  EXPECT_EQ(model.default_channels, 16);
  EXPECT_EQ(model.channel_scale,
            (std::map<int, double>{{1, 0.08}, {2, 0.15}, {4, 0.3}, {8, 0.6}, {16, 1.0}, {32, 1.04}}));
  ASSERT_EQ(model.algos.size(), 3u);
  EXPECT_EQ(model.algos.at("Ring").protos.at("LL128").lat_us, 16);
  EXPECT_EQ(model.algos.at("Tree").protos.at("Simple").busbw_gbps, 300);
  EXPECT_EQ(model.algos.at("NVLS").protos.size(), 1u);
  EXPECT_EQ(model.algos.at("NVLS").requires_env, (Condition{{"NCCL_NVLS_ENABLE", {"1", "2", std::nullopt}}}));
  ASSERT_EQ(model.effects.size(), 1u);
  EXPECT_EQ(model.effects[0].algo, std::optional<std::string>("NVLS"));
  const std::vector<Effect> network = model_for_nodes(model, 2).effects;  // the network's, 2+ nodes
  ASSERT_EQ(network.size(), 3u);
  EXPECT_EQ(network[1].busbw_scale, 1.08);
  EXPECT_EQ(network[1].lat_scale, 1.1);
  EXPECT_FALSE(network[1].algo.has_value());
  ASSERT_EQ(model.faults.size(), 2u);
  EXPECT_EQ(model.faults[0].kind, FaultKind::corrupt);
  EXPECT_EQ(model.faults[1].kind, FaultKind::init_error);
  EXPECT_EQ(model.noise.cv, 0.02);
  EXPECT_EQ(model.noise.seed, 7u);
}

TEST(FakeGpuModel, EveryFixtureParses) {
  for (const char* name : {"dgx-h100.yaml", "exact.yaml", "fault-init-error.yaml", "fault-hang.yaml",
                           "fault-crash.yaml", "fault-corrupt.yaml", "fault-slow-rank.yaml",
                           "fleet-healthy.yaml", "fleet-slow-node-link.yaml", "fleet-hang.yaml"}) {
    Result<FakeModel> model = load_fake_model(model_fixture(name));
    EXPECT_TRUE(model.ok()) << model.error();
  }
  const FakeModel slow = load_fixture("fault-slow-rank.yaml");
  ASSERT_EQ(slow.faults.size(), 1u);
  EXPECT_EQ(slow.faults[0].kind, FaultKind::slow_rank);
  EXPECT_EQ(slow.faults[0].rank, 1);
  EXPECT_EQ(slow.faults[0].factor, 2);
}

TEST(FakeGpuModel, UnknownKeysNameTheFileAndTheKeyPath) {
  EXPECT_EQ(fake_model_error("schema: nccltune/fake-model/v1\n"
                             "algos: {Ring: {LL: {latency: 9, busbw_gbps: 40}}}\n"),
            "model.yaml:2: algos.Ring.LL: unknown key 'latency'");
  EXPECT_EQ(fake_model_error(kMinimal + "colour: blue\n"), "model.yaml:3: unknown key 'colour'");
  EXPECT_EQ(fake_model_error(kMinimal + "faults: [{fault: hang, severity: 3}]\n"),
            "model.yaml:3: faults[0]: unknown key 'severity'");
  EXPECT_EQ(fake_model_error("schema: nccltune/fake-model/v1\n"
                             "algos: {Rnig: {Simple: {lat_us: 1, busbw_gbps: 1}}}\n"),
            "model.yaml:2: algos: unknown key 'Rnig'");
  EXPECT_EQ(fake_model_error(kMinimal + "algos_extra: 1\n"), "model.yaml:3: unknown key 'algos_extra'");
  EXPECT_EQ(fake_model_error(kMinimal + "channels: {default: 8, scale: {1: 0.5}}\n"),
            "model.yaml:3: channels: unknown key 'scale'");
  EXPECT_EQ(fake_model_error(kMinimal + "noise: {cv: 0.1, sed: 1}\n"),
            "model.yaml:3: noise: unknown key 'sed'");
  EXPECT_EQ(fake_model_error(kMinimal + "devices: [{name: x, pci: y, sm: 90, memory: 80}]\n"),
            "model.yaml:3: devices[0]: unknown key 'memory'");
  EXPECT_EQ(fake_model_error(kMinimal + "default: [{algo: Ring, proto: Simple, max: 8}]\n"),
            "model.yaml:3: default[0]: unknown key 'max'");
  EXPECT_EQ(fake_model_error(kMinimal + "effects: [{when: {NCCL_ALGO: Ring}, bus_scale: 2}]\n"),
            "model.yaml:3: effects[0]: unknown key 'bus_scale'");
}

TEST(FakeGpuModel, BadValuesAreErrorsNamingTheKey) {
  EXPECT_EQ(fake_model_error("schema: nccltune/fake-model/v2\n" + kMinimal.substr(kMinimal.find('\n') + 1)),
            "model.yaml:1: schema: 'nccltune/fake-model/v2' is not nccltune/fake-model/v1");
  EXPECT_EQ(fake_model_error("schema: nccltune/fake-model/v1\n"), "model.yaml:1: algos: missing");
  EXPECT_EQ(fake_model_error(kMinimal + "default: [{algo: Ring, proto: LL}]\n"),
            "model.yaml:3: default[0].proto: Ring has no LL in 'algos'");
  EXPECT_EQ(fake_model_error(kMinimal + "faults: [{fault: explode}]\n"),
            "model.yaml:3: faults[0].fault: unknown fault 'explode' (init_error, hang, crash, "
            "corrupt, slow_rank, slow_node, slow_link or late_rank)");
  EXPECT_EQ(fake_model_error(kMinimal + "effects: [{when: {ALGO: Ring}, busbw_scale: 2}]\n"),
            "model.yaml:3: effects[0].when.ALGO: is not an NCCL_ variable");
  EXPECT_EQ(fake_model_error("schema: nccltune/fake-model/v1\n"
                             "algos: {Ring: {Simple: {lat_us: 10, busbw_gbps: fast}}}\n"),
            "model.yaml:2: algos.Ring.Simple.busbw_gbps: must be a finite number");
  EXPECT_EQ(fake_model_error(kMinimal + "noise: [1, 2]\n"), "model.yaml:3: noise: must be a map");
  const std::string broken = fake_model_error(kMinimal + "faults: [{fault: [\n");
  EXPECT_EQ(broken.rfind("model.yaml:", 0), 0u) << broken;
  EXPECT_NE(broken.find("invalid YAML"), std::string::npos) << broken;
  EXPECT_EQ(fake_model_error(""), "model.yaml:1: the model is empty");
  Result<FakeModel> missing = load_fake_model("/nonexistent/model.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "cannot read fake model: /nonexistent/model.yaml: no such file");
}

TEST(FakeGpuModel, ACollectivesEntryReplacesTheTopLevelKeysForThatOpOnly) {
  Result<FakeModel> model = parse_fake_model(
      "schema: nccltune/fake-model/v1\n"
      "algos: {Ring: {Simple: {lat_us: 10, busbw_gbps: 100}}, Tree: {LL: {lat_us: 5, busbw_gbps: 20}}}\n"
      "default: [{algo: Ring, proto: Simple}]\n"
      "effects: [{when: {NCCL_MIN_NCHANNELS: \"32\"}, busbw_scale: 1.1}]\n"
      "collectives:\n"
      "  reduce_scatter:\n"
      "    effects: [{when: {NCCL_MIN_NCHANNELS: \"32\"}, busbw_scale: 0.85}]\n"
      "  all_gather:\n"
      "    default: [{max_bytes: 65536, algo: Tree, proto: LL}, {algo: Ring, proto: Simple}]\n"
      "    channels: {default: 8}\n"
      "  alltoall:\n"
      "    faults: [{when: {NCCL_PROTO: LL}, fault: corrupt}]\n",
      "model.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  const FakeModel all_reduce = model_for_collective(*model, "all_reduce");
  EXPECT_EQ(all_reduce.effects.at(0).busbw_scale, 1.1);
  EXPECT_TRUE(all_reduce.collectives.empty());
  const FakeModel reduce_scatter = model_for_collective(*model, "reduce_scatter");
  EXPECT_EQ(reduce_scatter.effects.at(0).busbw_scale, 0.85);
  EXPECT_EQ(reduce_scatter.defaults.size(), 1u);  // the top level's
  const FakeModel all_gather = model_for_collective(*model, "all_gather");
  ASSERT_EQ(all_gather.defaults.size(), 2u);
  EXPECT_EQ(all_gather.defaults[0].algo, "Tree");
  EXPECT_EQ(all_gather.default_channels, 8);
  EXPECT_EQ(all_gather.effects.at(0).busbw_scale, 1.1);  // not given there: the top level's
  EXPECT_EQ(model_for_collective(*model, "alltoall").faults.size(), 1u);
  EXPECT_TRUE(model_for_collective(*model, "all_reduce").faults.empty());
}

TEST(FakeGpuModel, CollectivesEntriesAreReadAsStrictlyAsTheTopLevel) {
  EXPECT_EQ(fake_model_error(kMinimal + "collectives: {allreduce: {}}\n"),
            "model.yaml:3: collectives: unknown key 'allreduce'");
  EXPECT_EQ(fake_model_error(kMinimal + "collectives: {all_gather: {noise: {cv: 1}}}\n"),
            "model.yaml:3: collectives.all_gather: unknown key 'noise'");
  EXPECT_EQ(fake_model_error(kMinimal + "collectives: {all_gather: {default: [{algo: Tree, proto: LL}]}}\n"),
            "model.yaml:3: collectives.all_gather.default[0].algo: Tree is not in 'algos'");
  // An op that replaces algos must still have every pair the top-level default uses.
  EXPECT_NE(fake_model_error(kMinimal +
                             "default: [{algo: Ring, proto: Simple}]\n"
                             "collectives: {alltoall: {algos: {Tree: {LL: {lat_us: 1, busbw_gbps: 1}}}}}\n")
                .find("collectives.alltoall.algos: its algos lack Ring/Simple"),
            std::string::npos);
}

TEST(FakeGpuModel, NodeCountEntriesResolveEachKeyMostSpecificFirst) {
  Result<FakeModel> model = parse_fake_model(
      "schema: nccltune/fake-model/v1\n"
      "algos: {Ring: {Simple: {lat_us: 10, busbw_gbps: 100}}, Tree: {LL: {lat_us: 5, busbw_gbps: 20}}}\n"
      "default: [{algo: Ring, proto: Simple}]\n"
      "channels: {default: 16}\n"
      "effects: [{when: {NCCL_MIN_NCHANNELS: \"32\"}, busbw_scale: 1.1}]\n"
      "collectives:\n"
      "  reduce_scatter: {effects: [{when: {NCCL_MIN_NCHANNELS: \"32\"}, busbw_scale: 0.9}]}\n"
      "nodes:\n"
      "  - min_nodes: 8\n"
      "    default: [{algo: Tree, proto: LL}]\n"
      "    collectives:\n"
      "      reduce_scatter: {channels: {default: 4}}\n"
      "  - min_nodes: 2\n"
      "    channels: {default: 8}\n",
      "model.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  ASSERT_EQ(model->nodes.size(), 2u);
  EXPECT_EQ(model->nodes.front().min_nodes, 2);  // sorted
  // One node: the top level (no entry at or below 1).
  EXPECT_EQ(model_for_collective(*model, "all_reduce", 1).default_channels, 16);
  // 2 to 7 nodes: the entry of 2; 8 and more: the entry of 8 (its own keys), the rest from below.
  EXPECT_EQ(model_for_collective(*model, "all_reduce", 4).default_channels, 8);
  EXPECT_EQ(model_for_collective(*model, "all_reduce", 4).defaults.at(0).algo, "Ring");
  EXPECT_EQ(model_for_collective(*model, "all_reduce", 64).defaults.at(0).algo, "Tree");
  EXPECT_EQ(model_for_collective(*model, "all_reduce", 64).default_channels, 16);  // the 8 entry gives none
  // nodes[k].collectives[op] > collectives[op] > nodes[k] > the top level, key by key.
  const FakeModel scatter = model_for_collective(*model, "reduce_scatter", 8);
  EXPECT_EQ(scatter.default_channels, 4);
  EXPECT_EQ(scatter.effects.at(0).busbw_scale, 0.9);
  EXPECT_EQ(scatter.defaults.at(0).algo, "Tree");
  // model_for_nodes keeps each collective's entry, merged: the same answers.
  const FakeModel at_eight = model_for_nodes(*model, 8);
  EXPECT_TRUE(at_eight.nodes.empty());
  EXPECT_EQ(model_for_collective(at_eight, "reduce_scatter").default_channels, 4);
  EXPECT_EQ(model_for_collective(at_eight, "reduce_scatter").effects.at(0).busbw_scale, 0.9);
}

TEST(FakeGpuModel, NodeCountEntriesAreReadStrictly) {
  EXPECT_EQ(fake_model_error(kMinimal + "nodes: [{min_nodes: 2, noise: {cv: 1}}]\n"),
            "model.yaml:3: nodes[0]: unknown key 'noise'");
  EXPECT_NE(fake_model_error(kMinimal + "nodes: [{min_nodes: 2}, {min_nodes: 2}]\n").find("is given twice"),
            std::string::npos);
  EXPECT_NE(fake_model_error(kMinimal + "nodes: [{min_nodes: 0}]\n").find("nodes[0].min_nodes"),
            std::string::npos);
  // An entry that replaces algos must keep the pairs of the default that applies with it.
  EXPECT_NE(fake_model_error(kMinimal +
                             "default: [{algo: Ring, proto: Simple}]\n"
                             "nodes: [{min_nodes: 4, algos: {Tree: {LL: {lat_us: 1, busbw_gbps: 1}}}}]\n")
                .find("on 4 node(s) runs a default of Ring/Simple that its algos lack"),
            std::string::npos);
}

TEST(FakeGpuPlaces, NodesAreCountedFromHostsNotRankNumbers) {
  // NCCLTUNE_EMULATE_NODES: the launcher's blocks of ranks (world rank 5 of 16 on 8 nodes: node 2).
  EXPECT_EQ(process_host("gpu01.cluster", "8", 5, 16), "gpu01-node2");
  EXPECT_EQ(process_host("gpu01", nullptr, 5, 16), "gpu01");
  EXPECT_EQ(process_host("gpu01", "3", 5, 16), "gpu01");  // does not divide: one host
  // A communicator of world ranks 4-7 (nodes 2 and 3) has 2 nodes; one of ranks 4-5, one.
  const RankPlace split = place_in_comm({"h-node2", "h-node2", "h-node3", "h-node3"}, 2);
  EXPECT_EQ(split.nodes, 2);
  EXPECT_EQ(split.node, 1);
  EXPECT_EQ(split.local_ranks, 2);
  EXPECT_EQ(split.local_rank, 0);
  EXPECT_EQ(place_in_comm({"h-node2", "h-node2"}, 1).nodes, 1);
  // Unequal nodes are counted as NCCL counts them, by host.
  const RankPlace uneven = place_in_comm({"a", "b", "a", "a"}, 3);
  EXPECT_EQ(uneven.nodes, 2);
  EXPECT_EQ(uneven.local_ranks, 3);
  EXPECT_EQ(uneven.local_rank, 2);
}

TEST(FakeGpuModel, NamesAreCaseInsensitiveAndBecomeNcclsSpelling) {
  Result<FakeModel> model = parse_fake_model(
      "schema: nccltune/fake-model/v1\n"
      "algos: {ring: {simple: {lat_us: 10, busbw_gbps: 100}}, nvlstree: {ll128: {lat_us: 1, "
      "busbw_gbps: 1}}}\n"
      "default: [{algo: RING, proto: SIMPLE}]\n"
      "nccl_version: 22703\n"
      "device_count: 2\n",
      "model.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_TRUE(model->algos.at("Ring").protos.contains("Simple"));
  EXPECT_TRUE(model->algos.at("NVLSTree").protos.contains("LL128"));
  EXPECT_EQ(model->defaults[0].algo, "Ring");
  EXPECT_EQ(model->defaults[0].proto, "Simple");
  EXPECT_EQ(model->nccl_version, 22703);
  EXPECT_EQ(model->device_count, 2);
}

// ---------------------------------------------------------------------------------------------
// The NCCL_* environment

TEST(FakeGpuEnv, ReadsOnlySetNcclVariables) {
  const char* environment[] = {"NCCL_ALGO=Ring",       "PATH=/bin", "NCCL_PROTO=", "NCCLX=1",
                               "NCCL_MIN_NCHANNELS=4", nullptr};
  EXPECT_EQ(read_nccl_env(environment), (NcclEnv{{"NCCL_ALGO", "Ring"}, {"NCCL_MIN_NCHANNELS", "4"}}));
}

TEST(FakeGpuEnv, ValuesCompareAsNcclReadsThem) {
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "0"), "LOC");
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "2"), "PXB");
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "4"), "SYS");
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "5"), "SYS");
  // ncclGetLevel (src/graph/paths.cc): names with strcmp, so `phb` is ignored; digits by strtol.
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "PHB"), "PHB");
  EXPECT_NE(normalized_value("NCCL_NET_GDR_LEVEL", "phb"), "PHB");
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "9"), "SYS");
  EXPECT_EQ(normalized_value("NCCL_NET_GDR_LEVEL", "PXN"), "PXN");
  EXPECT_EQ(normalized_value("NCCL_ALGO", "Tree"), "tree");
  EXPECT_EQ(normalized_value("NCCL_IB_HCA", "mlx5_0"), "mlx5_0");
  const Condition nvls{{"NCCL_NVLS_ENABLE", {"1", std::nullopt}}};
  EXPECT_TRUE(holds(nvls, {}));
  EXPECT_TRUE(holds(nvls, {{"NCCL_NVLS_ENABLE", "1"}}));
  EXPECT_FALSE(holds(nvls, {{"NCCL_NVLS_ENABLE", "0"}}));
  EXPECT_TRUE(holds({{"NCCL_ALGO", {"Tree"}}, {"NCCL_PROTO", {"LL128"}}},
                    {{"NCCL_ALGO", "tree"}, {"NCCL_PROTO", "ll128"}}));
  EXPECT_FALSE(holds({{"NCCL_ALGO", {"Tree"}}, {"NCCL_PROTO", {"LL128"}}}, {{"NCCL_ALGO", "Tree"}}));
  EXPECT_TRUE(holds({}, {{"NCCL_ALGO", "Tree"}}));
  EXPECT_TRUE(holds({{"NCCL_IB_QPS_PER_CONNECTION", {"4"}}}, {{"NCCL_IB_QPS_PER_CONNECTION", "4"}}));
  EXPECT_FALSE(holds({{"NCCL_IB_QPS_PER_CONNECTION", {"4"}}}, {{"NCCL_IB_QPS_PER_CONNECTION", "04"}}));

  const std::optional<NameFilter> exclude = name_filter({{"NCCL_ALGO", "^ring, TREE"}}, "NCCL_ALGO");
  ASSERT_TRUE(exclude.has_value());
  EXPECT_FALSE(exclude->allows("Ring"));
  EXPECT_FALSE(exclude->allows("Tree"));
  EXPECT_TRUE(exclude->allows("NVLS"));
  EXPECT_FALSE(name_filter({}, "NCCL_ALGO").has_value());
}

// ---------------------------------------------------------------------------------------------
// Timing, selection, channels, effects, faults, noise

TEST(FakeGpuTiming, WithoutNoiseTheTimeIsTheFormula) {
  const FakeModel model = load_fixture("exact.yaml");
  const CommModel comm = resolve(model, {});
  const double gib = 1 << 30;
  // Defaults by size: Ring/Simple above 16 MiB, Ring/LL128 up to it, Tree/LL up to 64 KiB.
  EXPECT_DOUBLE_EQ(op_time_us(model, comm, "all_reduce", gib),
                   28 + gib / (360e9 * 1.0 * 1.0 / (2.0 * 7 / 8)) * 1e6);
  EXPECT_DOUBLE_EQ(op_time_us(model, comm, "all_gather", gib), 28 + gib / (360e9 / (7.0 / 8)) * 1e6);
  EXPECT_DOUBLE_EQ(op_time_us(model, comm, "broadcast", 1 << 20), 16 + (1 << 20) / 300e9 * 1e6);
  EXPECT_DOUBLE_EQ(op_time_us(model, comm, "reduce_scatter", 4096), 7 + 4096 / (35e9 / (7.0 / 8)) * 1e6);
  EXPECT_DOUBLE_EQ(op_time_us(model, comm, "alltoall", 4096), 7 + 4096 / (35e9 / (7.0 / 8)) * 1e6);
  // One rank moves nothing over the bus: all_reduce costs its latency only.
  EXPECT_DOUBLE_EQ(op_time_us(model, resolve(model, {}, 0, 1), "all_reduce", gib), 28);
}

TEST(FakeGpuTiming, ChannelsAndEffectsScaleTheFormula) {
  const FakeModel model = load_fixture("exact.yaml");
  const CommModel comm = resolve_on_two_nodes(
      model, {{"NCCL_MAX_NCHANNELS", "4"}, {"NCCL_NET_GDR_LEVEL", "4"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}});
  EXPECT_EQ(comm.channels, 4);
  EXPECT_DOUBLE_EQ(comm.channel_scale, 0.3);
  EXPECT_DOUBLE_EQ(comm.busbw_scale, 1.15 * 1.08);
  EXPECT_DOUBLE_EQ(comm.lat_scale, 1.1);
  const double gib = 1 << 30;
  EXPECT_DOUBLE_EQ(op_time_us(model, comm, "broadcast", gib),
                   28 * 1.1 + gib / (360e9 * 0.3 * (1.15 * 1.08) / 1) * 1e6);
}

TEST(FakeGpuChannels, DefaultRaisedByMinCappedByMax) {
  const FakeModel model = load_fixture("dgx-h100.yaml");
  EXPECT_EQ(channels_used(model, {}), 16);
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_NCHANNELS", "32"}}), 32);
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_NCHANNELS", "8"}}), 16);
  EXPECT_EQ(channels_used(model, {{"NCCL_MAX_NCHANNELS", "4"}}), 4);
  EXPECT_EQ(channels_used(model, {{"NCCL_MAX_NCHANNELS", "24"}}), 16);
  // ncclTopoPostset (src/graph/connect.cc): the maximum first, then copyChannels to the minimum.
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_NCHANNELS", "64"}, {"NCCL_MAX_NCHANNELS", "32"}}), 64);
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_NCHANNELS", "100"}}), 64) << "MAXCHANNELS";
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_CTAS", "24"}}), 24);
  EXPECT_EQ(channels_used(model, {{"NCCL_MAX_CTAS", "8"}}), 8);
  EXPECT_EQ(channels_used(model, {{"NCCL_MAX_CTAS", "0"}}), 16) << "NCCL ignores CTAs of 0 or less";
  // ncclLoadParam (src/misc/param.cc): strtoll, so no digits read as 0 and trailing text is dropped.
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_NCHANNELS", "many"}}), 16);
  EXPECT_EQ(channels_used(model, {{"NCCL_MAX_NCHANNELS", "many"}}), 1);
  EXPECT_EQ(channels_used(model, {{"NCCL_MIN_NCHANNELS", "32x"}}), 32);
  // A count missing from busbw_scale takes the nearest listed count below it.
  EXPECT_DOUBLE_EQ(channel_scale(model, 16), 1.0);
  EXPECT_DOUBLE_EQ(channel_scale(model, 24), 1.0);
  EXPECT_DOUBLE_EQ(channel_scale(model, 3), 0.15);
  EXPECT_DOUBLE_EQ(channel_scale(model, 64), 1.04);
  EXPECT_DOUBLE_EQ(resolve(model, {{"NCCL_MIN_NCHANNELS", "24"}}).channel_scale, 1.0);
  EXPECT_DOUBLE_EQ(resolve(model, {{"NCCL_MIN_NCHANNELS", "48"}}).channel_scale, 1.04);
}

TEST(FakeGpuEffects, ApplyWhenEveryListedVariableMatches) {
  // The network's knobs act on 2 nodes (the fixture's `nodes` entry), never on one.
  EXPECT_DOUBLE_EQ(resolve(load_fixture("dgx-h100.yaml"), {{"NCCL_NET_GDR_LEVEL", "SYS"}}).busbw_scale, 1);
  const FakeModel model = model_for_nodes(load_fixture("dgx-h100.yaml"), 2);
  const CommModel none = resolve_on_two_nodes(model, {});
  EXPECT_EQ(none.busbw_scale, 1);
  EXPECT_EQ(none.lat_scale, 1);
  EXPECT_DOUBLE_EQ(resolve_on_two_nodes(model, {{"NCCL_NET_GDR_LEVEL", "SYS"}}).busbw_scale, 1.15);
  EXPECT_DOUBLE_EQ(resolve_on_two_nodes(model, {{"NCCL_NET_GDR_LEVEL", "5"}}).busbw_scale, 1.15);
  EXPECT_DOUBLE_EQ(resolve_on_two_nodes(model, {{"NCCL_NET_GDR_LEVEL", "PHB"}}).busbw_scale, 1);
  EXPECT_DOUBLE_EQ(resolve_on_two_nodes(model, {{"NCCL_NET_GDR_LEVEL", "sys"}}).busbw_scale, 1)
      << "NCCL ignores `sys`";
  const CommModel both =
      resolve_on_two_nodes(model, {{"NCCL_NET_GDR_LEVEL", "SYS"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}});
  EXPECT_DOUBLE_EQ(both.busbw_scale, 1.15 * 1.08);
  EXPECT_DOUBLE_EQ(both.lat_scale, 1.1);
  const CommModel qps_only = resolve_on_two_nodes(model, {{"NCCL_IB_QPS_PER_CONNECTION", "4"}});
  EXPECT_EQ(qps_only.busbw_scale, 1);
  EXPECT_EQ(qps_only.lat_scale, 1);
}

TEST(FakeGpuEffects, AnEffectOnOneAlgorithmMovesOnlyItsOps) {
  // As NCCL_NVLS_CHUNKSIZE (src/transport/nvls.cc) moves only what NVLS runs.
  const FakeModel model = load_fixture("dgx-h100.yaml");
  const NcclEnv chunk{{"NCCL_NVLS_CHUNKSIZE", "262144"}};
  const CommModel comm = resolve(model, chunk);
  EXPECT_EQ(comm.busbw_scale, 1);
  const CommModel plain = resolve(model, {});
  const double gib = 1 << 30;
  for (const AlgoProto& pair : {AlgoProto{"Ring", "Simple"}, AlgoProto{"Tree", "LL"}})
    EXPECT_DOUBLE_EQ(pair_time_us(model, comm, pair, "all_reduce", gib),
                     pair_time_us(model, plain, pair, "all_reduce", gib));
  const AlgoProto nvls{"NVLS", "Simple"};
  EXPECT_LT(pair_time_us(model, comm, nvls, "all_reduce", gib), pair_time_us(model, plain, nvls, "all_reduce", gib));
  EXPECT_EQ(fake_model_error(kMinimal + "effects: [{when: {NCCL_NVLS_CHUNKSIZE: \"1\"}, algo: Butterfly}]\n"),
            "model.yaml:3: effects[0].algo: 'Butterfly' is not an NCCL algorithm");
}

TEST(FakeGpuSelection, PatRunsAllGatherAndReduceScatterWithSimpleOnOneGpuPerNode) {
  // ncclPatEnable and ncclTopoTuneModel (src/graph/tuning.cc, 2.28.9).
  FakeModel model = load_fixture("dgx-h100.yaml");
  model.algos["PAT"].protos["Simple"] = ProtoCost{10, 200};
  model.algos["PAT"].protos["LL"] = ProtoCost{5, 20};
  const NcclEnv pat{{"NCCL_ALGO", "PAT"}};
  const CommNodes four_nodes{0, {0, 1, 2, 3}, 4};
  const auto allowed = [&](const NcclEnv& env, std::string_view op, int nranks) {
    Result<CommModel> comm = resolve_comm_model(model, env, 0, nranks, op, four_nodes);
    return comm.ok() ? comm->allowed : std::vector<AlgoProto>{};
  };
  EXPECT_EQ(allowed(pat, "all_gather", 4), (std::vector<AlgoProto>{{"PAT", "Simple"}}));
  EXPECT_EQ(allowed(pat, "reduce_scatter", 4), (std::vector<AlgoProto>{{"PAT", "Simple"}}));
  EXPECT_TRUE(allowed(pat, "all_reduce", 4).empty());  // NCCL 2.24+: no algorithm left, an error
  EXPECT_TRUE(allowed(pat, "all_gather", 8).empty());  // two GPUs per node
  EXPECT_EQ(allowed({{"NCCL_ALGO", "PAT"}, {"NCCL_PAT_ENABLE", "1"}}, "all_gather", 8),
            (std::vector<AlgoProto>{{"PAT", "Simple"}}));
  EXPECT_TRUE(allowed({{"NCCL_ALGO", "PAT"}, {"NCCL_PAT_ENABLE", "0"}}, "all_gather", 4).empty());
  // The communicator still inits: all_reduce's calls fail (NCCL's topoGetAlgoInfo), and say why.
  Result<CommModel> all_reduce = resolve_comm_model(model, pat, 0, 4, "all_reduce", four_nodes);
  ASSERT_TRUE(all_reduce.ok()) << all_reduce.error();
  EXPECT_TRUE(all_reduce->no_pair_by_list);
  EXPECT_NE(all_reduce->no_pair.find("NCCL_ALGO='PAT'"), std::string::npos) << all_reduce->no_pair;
}

TEST(FakeGpuSelection, EachCollectiveGetsTheAlgorithmsNcclHasACostFor) {
  // ncclTopoTuneModel (src/graph/tuning.cc, 2.28.9): Broadcast and Reduce run Ring only,
  // AllGather and ReduceScatter no Tree, NVLS Simple only; alltoall (send/recv) is not filtered.
  FakeModel model = load_fixture("dgx-h100.yaml");
  model.algos["NVLS"].protos["LL"] = ProtoCost{5, 20};
  const auto resolve_op = [&](const NcclEnv& env, std::string_view op) {
    Result<CommModel> comm = resolve_comm_model(model, env, 0, 8, op);
    EXPECT_TRUE(comm.ok()) << comm.error();
    return comm.ok() ? *comm : CommModel{};
  };
  const auto algos = [&](std::string_view op) {
    std::set<std::string> names;
    for (const AlgoProto& pair : resolve_op({{"NCCL_NVLS_ENABLE", "1"}}, op).allowed)
      names.insert(pair.algo + "/" + pair.proto);
    return names;
  };
  EXPECT_EQ(algos("broadcast"), (std::set<std::string>{"Ring/LL", "Ring/LL128", "Ring/Simple"}));
  EXPECT_EQ(algos("reduce"), algos("broadcast"));
  EXPECT_EQ(algos("all_gather"),
            (std::set<std::string>{"NVLS/Simple", "Ring/LL", "Ring/LL128", "Ring/Simple"}));
  EXPECT_EQ(algos("reduce_scatter"), algos("all_gather"));
  EXPECT_EQ(algos("all_reduce").count("Tree/LL"), 1u);
  EXPECT_EQ(algos("all_reduce").count("NVLS/LL"), 0u);
  EXPECT_EQ(algos("alltoall").count("Tree/LL"), 1u);
  // A list that leaves Broadcast nothing: its calls fail, with ncclInvalidUsage.
  const CommModel tree = resolve_op({{"NCCL_ALGO", "Tree"}}, "broadcast");
  EXPECT_TRUE(tree.allowed.empty());
  EXPECT_TRUE(tree.no_pair_by_list);
}

TEST(FakeGpuSelection, DefaultsBySizeWithoutAlgoOrProto) {
  const FakeModel model = load_fixture("dgx-h100.yaml");
  EXPECT_EQ(choice(model, {}, 65536), (AlgoProto{"Tree", "LL"}));
  EXPECT_EQ(choice(model, {}, 65537), (AlgoProto{"Ring", "LL128"}));
  EXPECT_EQ(choice(model, {}, 16777216), (AlgoProto{"Ring", "LL128"}));
  EXPECT_EQ(choice(model, {}, 16777217), (AlgoProto{"Ring", "Simple"}));
  // Other variables do not turn the defaults off.
  EXPECT_EQ(choice(model, {{"NCCL_NVLS_ENABLE", "1"}}, 1 << 30), (AlgoProto{"Ring", "Simple"}));
}

TEST(FakeGpuSelection, AListThatAllowsNcclsOwnChoiceChangesNothing) {
  const FakeModel model = load_fixture("dgx-h100.yaml");
  const double gib = 1 << 30;
  // NCCL reads the lists as a filter and its cost model still picks among what is left: every
  // list below allows the default pair at that size, so the default runs.
  for (const double bytes : {8.0, 65536.0, 300000.0, 16777216.0, gib}) {
    const AlgoProto own = choice(model, {}, bytes);
    for (const NcclEnv& lists :
         std::vector<NcclEnv>{{{"NCCL_ALGO", "Ring,Tree"}, {"NCCL_PROTO", "LL,LL128,Simple"}},
                              {{"NCCL_ALGO", "ring,tree,nvls"}},
                              {{"NCCL_ALGO", "^NVLS,PAT"}},
                              {{"NCCL_ALGO", "Tree;allreduce:Ring,Tree"}},
                              {{"NCCL_NVLS_ENABLE", "1"}, {"NCCL_PROTO", "Simple,LL,LL128"}}}) {
      EXPECT_EQ(choice(model, lists, bytes), own) << bytes << " B";
    }
  }
  // All the more for another collective: an entry scoped to all_gather leaves all_reduce alone.
  EXPECT_EQ(choice(model, {{"NCCL_ALGO", "allgather:NVLS"}}, 8), (AlgoProto{"Tree", "LL"}));
}

TEST(FakeGpuSelection, ListsThatExcludeNcclsOwnChoicePickTheFastestAllowedPair) {
  const FakeModel model = load_fixture("dgx-h100.yaml");
  const double gib = 1 << 30;
  EXPECT_EQ(choice(model, {{"NCCL_ALGO", "ring"}}, 8), (AlgoProto{"Ring", "LL"}));
  EXPECT_EQ(choice(model, {{"NCCL_ALGO", "ring"}}, gib), (AlgoProto{"Ring", "Simple"}));
  EXPECT_EQ(choice(model, {{"NCCL_ALGO", "NVLS"}}, 8), (AlgoProto{"NVLS", "Simple"}));
  EXPECT_EQ(choice(model, {{"NCCL_ALGO", "^Ring,TREE"}}, 8), (AlgoProto{"NVLS", "Simple"}));
  EXPECT_EQ(choice(model, {{"NCCL_PROTO", "ll128"}}, 8), (AlgoProto{"Tree", "LL128"}));
  EXPECT_EQ(choice(model, {{"NCCL_PROTO", "LL128"}}, gib), (AlgoProto{"Ring", "LL128"}));
  EXPECT_EQ(choice(model, {{"NCCL_ALGO", "Tree,Ring"}, {"NCCL_PROTO", "^LL"}}, 8),
            (AlgoProto{"Tree", "LL128"}));
  // Without NVLS's requirement NVLS is not a candidate; with it, it wins large sizes once Ring,
  // NCCL's own choice there, is excluded.
  EXPECT_EQ(choice(model, {{"NCCL_NVLS_ENABLE", "0"}, {"NCCL_ALGO", "^Ring"}}, gib),
            (AlgoProto{"Tree", "Simple"}));
  EXPECT_EQ(choice(model, {{"NCCL_NVLS_ENABLE", "1"}, {"NCCL_ALGO", "^Ring"}}, gib),
            (AlgoProto{"NVLS", "Simple"}));
  // Once the default is excluded, the pick is the fastest of everything allowed.
  const CommModel comm = resolve(model, {{"NCCL_PROTO", "^LL128"}});
  const AlgoProto picked = choose_algo_proto(model, comm, "all_gather", 300000);
  EXPECT_NE(picked, (AlgoProto{"Ring", "LL128"}));
  for (const AlgoProto& pair : comm.allowed)
    EXPECT_LE(pair_time_us(model, comm, picked, "all_gather", 300000),
              pair_time_us(model, comm, pair, "all_gather", 300000));

  Result<CommModel> nothing =
      resolve_comm_model(model, {{"NCCL_NVLS_ENABLE", "0"}, {"NCCL_ALGO", "NVLS"}}, 0, 8);
  ASSERT_TRUE(nothing.ok()) << nothing.error();
  EXPECT_TRUE(nothing->allowed.empty());
  EXPECT_NE(nothing->no_pair.find("NCCL_ALGO='NVLS'"), std::string::npos) << nothing->no_pair;
}

TEST(FakeGpuSelection, ADefaultThatIsNotAllowedFallsBackToTheFastest) {
  Result<FakeModel> model = parse_fake_model(
      "schema: nccltune/fake-model/v1\n"
      "default: [{algo: NVLS, proto: Simple}]\n"
      "algos:\n"
      "  Ring: {LL: {lat_us: 5, busbw_gbps: 10}, Simple: {lat_us: 20, busbw_gbps: 100}}\n"
      "  NVLS: {Simple: {lat_us: 1, busbw_gbps: 1000}, requires: {NCCL_NVLS_ENABLE: '1'}}\n",
      "model.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_EQ(choice(*model, {{"NCCL_NVLS_ENABLE", "1"}}, 8), (AlgoProto{"NVLS", "Simple"}));
  EXPECT_EQ(choice(*model, {}, 8), (AlgoProto{"Ring", "LL"}));
  EXPECT_EQ(choice(*model, {}, 1 << 30), (AlgoProto{"Ring", "Simple"}));
}

TEST(FakeGpuFaults, HoldForTheirConditionAndRank) {
  const FakeModel dgx = load_fixture("dgx-h100.yaml");
  // Tree/LL128 corrupts whenever it runs (pair_faults_test.cpp), read per op, not at init.
  EXPECT_TRUE(corrupts(resolve(dgx, {{"NCCL_ALGO", "tree"}, {"NCCL_PROTO", "LL128"}}), {"Tree", "LL128"}));
  EXPECT_FALSE(corrupts(resolve(dgx, {{"NCCL_ALGO", "Tree"}}), {"Tree", "LL"}));
  EXPECT_TRUE(resolve(load_fixture("fault-hang.yaml"), {{"NCCL_ALGO", "Tree"}}).has(FaultKind::hang));
  EXPECT_TRUE(
      resolve(load_fixture("fault-init-error.yaml"), {{"NCCL_PROTO", "LL128"}}).has(FaultKind::init_error));
  EXPECT_TRUE(resolve(load_fixture("fault-crash.yaml"), {{"NCCL_PROTO", "LL"}}).has(FaultKind::crash));
  EXPECT_TRUE(resolve(load_fixture("fault-crash.yaml"), {}).faults.empty());

  const FakeModel slow = load_fixture("fault-slow-rank.yaml");
  const CommModel rank0 = resolve(slow, {}, 0, 4);
  const CommModel rank1 = resolve(slow, {}, 1, 4);
  EXPECT_FALSE(rank0.has(FaultKind::slow_rank));
  EXPECT_TRUE(rank1.has(FaultKind::slow_rank));
  EXPECT_DOUBLE_EQ(op_time_us(slow, rank1, "all_reduce", 1 << 20),
                   2 * op_time_us(slow, rank0, "all_reduce", 1 << 20));
}

TEST(FakeGpuNoise, DeterministicPerSeedAndRank) {
  NoiseSource quiet(Noise{0, 7}, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(quiet.next_factor(), 1.0);
  NoiseSource first(Noise{0.02, 7}, 0);
  NoiseSource again(Noise{0.02, 7}, 0);
  NoiseSource other_rank(Noise{0.02, 7}, 1);
  NoiseSource other_seed(Noise{0.02, 8}, 0);
  int differs_by_rank = 0;
  int differs_by_seed = 0;
  for (int i = 0; i < 1000; ++i) {
    const double factor = first.next_factor();
    EXPECT_EQ(factor, again.next_factor());
    EXPECT_GT(factor, 0.8);
    EXPECT_LT(factor, 1.2);
    differs_by_rank += factor != other_rank.next_factor();
    differs_by_seed += factor != other_seed.next_factor();
  }
  EXPECT_EQ(differs_by_rank, 1000);
  EXPECT_EQ(differs_by_seed, 1000);
}

// ---------------------------------------------------------------------------------------------
// The libraries, loaded by path with RTLD_LOCAL as the product loads them

TEST(FakeGpuLibraries, LoadErrorsNameThePathAndTheSymbol) {
  Result<CudaDriver> absent = CudaDriver::load("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().rfind("cannot load the CUDA driver library '/nonexistent/libcuda.so.1': ", 0), 0u)
      << absent.error();
  Result<NcclLibrary> wrong = NcclLibrary::load(NCCLTUNE_FAKECUDA);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error(), std::string(NCCLTUNE_FAKECUDA) + ": missing symbol ncclGetVersion");
  Result<CudaDriver> also_wrong = CudaDriver::load(NCCLTUNE_FAKENCCL);
  ASSERT_FALSE(also_wrong.ok());
  EXPECT_EQ(also_wrong.error(), std::string(NCCLTUNE_FAKENCCL) + ": missing symbol cuInit");
}

TEST(FakeGpuLibraries, DevicesComeFromTheModelCycled) {
  setenv("NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml").c_str(), 1);
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  EXPECT_EQ(*cuda->driver_version(), 13000);
  EXPECT_EQ(*cuda->device_count(), 8);
  Result<CudaDeviceInfo> fifth = cuda->device_info(5);
  ASSERT_TRUE(fifth.ok()) << fifth.error();
  EXPECT_EQ(fifth->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(fifth->pci_bus_id, "0000:2A:00.0");  // devices[5 % 4]
  EXPECT_EQ(fifth->sm, 90);
  Result<CudaDeviceInfo> beyond = cuda->device_info(8);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.error(), "device 8: cuDeviceGet: invalid device ordinal (CUresult 101)");
  // No current context yet on this thread: no memory.
  Result<DeviceBuffer> early = cuda->allocate(64);
  EXPECT_FALSE(early.ok());
}

TEST(FakeGpuLibraries, BuffersAreCheckedHostMemory) {
  setenv("NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml").c_str(), 1);
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  Result<CudaContext> device = cuda->use_device(1);
  ASSERT_TRUE(device.ok()) << device.error();
  Result<DeviceBuffer> buffer = cuda->allocate(16);
  ASSERT_TRUE(buffer.ok()) << buffer.error();
  const char text[] = "fifteen letters";
  ASSERT_TRUE(cuda->copy_to_device(*buffer, 0, text, 16).ok());
  char back[8] = {};
  ASSERT_TRUE(cuda->copy_to_host(back, *buffer, 8, 8).ok());
  EXPECT_STREQ(back, "letters");
  Status overrun = cuda->copy_to_host(back, *buffer, 9, 8);
  ASSERT_FALSE(overrun.ok());
  EXPECT_EQ(overrun.error(), "cuMemcpyDtoH_v2: invalid argument (CUresult 1)");
}

TEST(FakeGpuLibraries, ElapsedTimesAreTheModelsAndNcclEnvIsReadAtInit) {
  setenv("NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml").c_str(), 1);
  unsetenv("NCCL_ALGO");
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  ASSERT_TRUE(cuda.ok()) << cuda.error();
  ASSERT_TRUE(nccl.ok()) << nccl.error();
  EXPECT_EQ(*nccl->version(), 22809);
  EXPECT_EQ(nccl_version_string(*nccl->version()), "2.28.9");
  Result<CudaContext> device = cuda->use_device(0);
  Result<CudaStream> stream = cuda->create_stream();
  Result<CudaEvent> start = cuda->create_event();
  Result<CudaEvent> stop = cuda->create_event();
  ASSERT_TRUE(device.ok() && stream.ok() && start.ok() && stop.ok());

  setenv("NCCL_PROTO", "LL", 1);
  Result<NcclComm> with_ll = nccl->init_rank(1, *nccl->unique_id(), 0);
  setenv("NCCL_PROTO", "Simple", 1);  // too late for that communicator
  Result<NcclComm> with_simple = nccl->init_rank(1, *nccl->unique_id(), 0);
  unsetenv("NCCL_PROTO");
  ASSERT_TRUE(with_ll.ok()) << with_ll.error();
  ASSERT_TRUE(with_simple.ok()) << with_simple.error();

  const FakeModel model = load_fixture("exact.yaml");
  const double bytes = 1 << 20;
  const double ll =
      op_time_us(model, resolve(model, {{"NCCL_PROTO", "LL"}}, 0, 1, "broadcast"), "broadcast", bytes);
  const double simple =
      op_time_us(model, resolve(model, {{"NCCL_PROTO", "Simple"}}, 0, 1, "broadcast"), "broadcast", bytes);
  ASSERT_NE(ll, simple);

  Result<DeviceBuffer> buffer = cuda->allocate(1 << 20);
  ASSERT_TRUE(buffer.ok());
  const CollectiveSpec& broadcast = *find_collective("broadcast");
  auto time_us = [&](const NcclComm& comm, int ops) {
    CollectiveArgs args;
    args.comm = comm.get();
    args.stream = stream->get();
    args.send = buffer->data();
    args.recv = buffer->data();
    args.count = (1 << 20) / 4;
    EXPECT_TRUE(cuda->record(*start, *stream).ok());
    for (int i = 0; i < ops; ++i) EXPECT_TRUE(broadcast.run(*nccl, args).ok());
    EXPECT_TRUE(cuda->record(*stop, *stream).ok());
    return 1000.0 * static_cast<double>(*cuda->elapsed_ms(*start, *stop));
  };
  EXPECT_NEAR(time_us(*with_ll, 1), ll, ll * 1e-6);
  EXPECT_NEAR(time_us(*with_ll, 10), 10 * ll, ll * 1e-5);
  EXPECT_NEAR(time_us(*with_simple, 3), 3 * simple, simple * 1e-5);
}

TEST(FakeGpuLibraries, AModelErrorFailsInitWithOneLine) {
  const TempDir dir("nccltune-fake-test");
  const std::string bad = (dir / "bad.yaml").string();
  write_file(bad,
             "schema: nccltune/fake-model/v1\n"
             "algos: {Ring: {LL: {latency: 9, busbw_gbps: 40}}}\n");
  const std::string old_nccl = (dir / "old-nccl.yaml").string();
  write_file(old_nccl, kMinimal + "nccl_version: 21903\n");
  setenv("NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml").c_str(), 1);
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  ASSERT_TRUE(cuda.ok() && nccl.ok());
  Result<CudaContext> device = cuda->use_device(0);
  ASSERT_TRUE(device.ok());

  setenv("NCCLTUNE_FAKE_MODEL", old_nccl.c_str(), 1);
  EXPECT_EQ(*nccl->version(), 21903);
  EXPECT_EQ(nccl_version_string(21903), "2.19.3");

  setenv("NCCLTUNE_FAKE_MODEL", bad.c_str(), 1);
  std::optional<Result<NcclComm>> comm;
  const std::string said = capture_stderr([&] { comm.emplace(nccl->init_rank(1, *nccl->unique_id(), 0)); });
  setenv("NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml").c_str(), 1);
  ASSERT_FALSE(comm->ok());
  EXPECT_EQ(comm->error(),
            "ncclCommInitRank(rank 0 of 1): invalid usage (run with NCCL_DEBUG=WARN for details) "
            "(ncclResult_t 5)");
  EXPECT_EQ(said, "fakenccl: " + bad + ":2: algos.Ring.LL: unknown key 'latency'\n");
}

// ---------------------------------------------------------------------------------------------
// Ranks in forked processes

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// What a rank's body gets: the libraries, its place in the communicator and the shared id, and
// a way to report to the test.
struct Rank {
  const CudaDriver& cuda;
  const NcclLibrary& nccl;
  int rank;
  int nranks;
  nccl_abi::ncclUniqueId id;
  std::function<void(const std::string&)> say;
};
using RankBody = std::function<void(const Rank&)>;

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string to_hex(const nccl_abi::ncclUniqueId& id) {
  std::string text;
  char byte[3];
  for (char c : id.internal) {
    std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(c));
    text += byte;
  }
  return text;
}

bool from_hex(const std::string& text, nccl_abi::ncclUniqueId& id) {
  if (text.size() < 2 * sizeof id.internal) return false;
  for (std::size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = static_cast<char>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  return true;
}

std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// The child: a clean NCCL_* environment plus `env`, the two fake libraries loaded by path, the
// id from rank 0 (relayed by the parent, as MPI would broadcast it), then the body.
[[noreturn]] void rank_main(int rank, int nranks, int in, int out, const Env& env, const RankBody& body) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  std::vector<std::string> inherited;
  for (char** entry = environ; *entry; ++entry)
    if (std::strncmp(*entry, "NCCL_", 5) == 0)
      inherited.emplace_back(*entry, std::strchr(*entry, '=') - *entry);
  for (const std::string& name : inherited) unsetenv(name.c_str());
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  auto say = [out](const std::string& text) { write_all(out, text); };
  Result<CudaDriver> cuda = CudaDriver::load(NCCLTUNE_FAKECUDA);
  Result<NcclLibrary> nccl = NcclLibrary::load(NCCLTUNE_FAKENCCL);
  if (!cuda || !nccl) {
    say("load-error " + (cuda ? nccl.error() : cuda.error()) + "\n");
    _exit(3);
  }
  nccl_abi::ncclUniqueId id{};
  if (rank == 0) {
    Result<nccl_abi::ncclUniqueId> made = nccl->unique_id();
    if (!made) _exit(4);
    id = *made;
    say("id " + to_hex(id) + "\n");
  } else if (!from_hex(read_line(in), id)) {
    _exit(5);
  }
  body(Rank{*cuda, *nccl, rank, nranks, id, say});
  _exit(0);
}

// `nranks` forked ranks (the first `started` of them only, to leave ranks missing).
class RankProcesses {
 public:
  RankProcesses(int nranks, const Env& env, const RankBody& body, int started = -1) {
    signal(SIGPIPE, SIG_IGN);
    const int count = started < 0 ? nranks : started;
    std::vector<int> child_in(static_cast<std::size_t>(count));
    std::vector<int> child_out(static_cast<std::size_t>(count));
    for (int r = 0; r < count; ++r) {
      int to_child[2];
      int from_child[2];
      EXPECT_EQ(pipe(to_child), 0);
      EXPECT_EQ(pipe(from_child), 0);
      ins_.push_back(to_child[1]);
      child_in[static_cast<std::size_t>(r)] = to_child[0];
      outs_.push_back(from_child[0]);
      child_out[static_cast<std::size_t>(r)] = from_child[1];
    }
    std::fflush(nullptr);
    for (int r = 0; r < count; ++r) {
      const pid_t pid = fork();
      if (pid == 0) {
        for (int other = 0; other < count; ++other) {
          close(ins_[static_cast<std::size_t>(other)]);
          close(outs_[static_cast<std::size_t>(other)]);
          if (other != r) {
            close(child_in[static_cast<std::size_t>(other)]);
            close(child_out[static_cast<std::size_t>(other)]);
          }
        }
        rank_main(r, nranks, child_in[static_cast<std::size_t>(r)], child_out[static_cast<std::size_t>(r)],
                  env, body);
      }
      pids_.push_back(pid);
    }
    for (int r = 0; r < count; ++r) {
      close(child_in[static_cast<std::size_t>(r)]);
      close(child_out[static_cast<std::size_t>(r)]);
    }
    outputs_.resize(static_cast<std::size_t>(count));
    open_.assign(static_cast<std::size_t>(count), true);
    statuses_.assign(static_cast<std::size_t>(count), -1);
  }

  ~RankProcesses() {
    kill_all();
    for (int fd : ins_) close(fd);
    for (std::size_t r = 0; r < outs_.size(); ++r)
      if (open_[r]) close(outs_[r]);
  }

  // Reads output until `done()` holds (true), or every output ended or `seconds` passed (false).
  bool read_until(const std::function<bool()>& done, double seconds) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    for (;;) {
      relay_id();
      if (done()) return true;
      std::vector<pollfd> polled;
      std::vector<std::size_t> ranks;
      for (std::size_t r = 0; r < outs_.size(); ++r) {
        if (!open_[r]) continue;
        polled.push_back({outs_[r], POLLIN, 0});
        ranks.push_back(r);
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (polled.empty() || left.count() <= 0) return done();
      if (poll(polled.data(), polled.size(), static_cast<int>(left.count())) <= 0) continue;
      for (std::size_t i = 0; i < polled.size(); ++i) {
        if (polled[i].revents == 0) continue;
        char buffer[4096];
        const ssize_t n = read(polled[i].fd, buffer, sizeof buffer);
        if (n > 0) {
          outputs_[ranks[i]].append(buffer, static_cast<std::size_t>(n));
        } else {
          close(polled[i].fd);
          open_[ranks[i]] = false;
        }
      }
    }
  }

  // Reads every output to its end and reaps every rank; kills the ranks still running after
  // `seconds` (the test then fails on their missing output or their signal).
  void finish(double seconds) {
    read_until([] { return false; }, seconds);
    kill_all();
  }

  void kill_all() {
    for (std::size_t r = 0; r < pids_.size(); ++r) {
      if (statuses_[r] != -1) continue;
      kill(pids_[r], SIGKILL);
      waitpid(pids_[r], &statuses_[r], 0);
    }
  }

  // Whether rank `r` is still running (reaps it when it is not).
  bool running(int r) {
    const auto index = static_cast<std::size_t>(r);
    if (statuses_[index] != -1) return false;
    return waitpid(pids_[index], &statuses_[index], WNOHANG) == 0 ? (statuses_[index] = -1, true) : false;
  }

  const std::string& output(int r) const { return outputs_[static_cast<std::size_t>(r)]; }
  int status(int r) const { return statuses_[static_cast<std::size_t>(r)]; }
  int count() const { return static_cast<int>(pids_.size()); }

 private:
  void relay_id() {
    if (relayed_) return;
    const std::size_t at = outputs_[0].find("id ");
    if (at == std::string::npos) return;
    const std::size_t end = outputs_[0].find('\n', at);
    if (end == std::string::npos) return;
    const std::string line = outputs_[0].substr(at + 3, end - at - 3) + "\n";
    for (std::size_t r = 1; r < ins_.size(); ++r) write_all(ins_[r], line);
    relayed_ = true;
  }

  std::vector<pid_t> pids_;
  std::vector<int> ins_;
  std::vector<int> outs_;
  std::vector<std::string> outputs_;
  std::vector<bool> open_;
  std::vector<int> statuses_;
  bool relayed_ = false;
};

// One row of a rank's sweep, as the rank reported it.
struct Row {
  std::string op;
  std::size_t bytes = 0;
  double out_of_place_us = 0;
  std::optional<double> in_place_us;
  std::optional<long> out_of_place_wrong;
  std::optional<long> in_place_wrong;
};

std::string optional_text(const std::optional<double>& value) {
  if (!value) return "-";
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", *value);
  return text;
}

std::string optional_text(const std::optional<int64_t>& value) {
  return value ? std::to_string(*value) : "-";
}

std::vector<Row> rows_of(const std::string& output) {
  std::vector<Row> rows;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("row ", 0) != 0) continue;
    std::istringstream in(line.substr(4));
    Row row;
    std::string in_place;
    std::string wrong_out;
    std::string wrong_in;
    in >> row.op >> row.bytes >> row.out_of_place_us >> in_place >> wrong_out >> wrong_in;
    if (in_place != "-") row.in_place_us = std::stod(in_place);
    if (wrong_out != "-") row.out_of_place_wrong = std::stol(wrong_out);
    if (wrong_in != "-") row.in_place_wrong = std::stol(wrong_in);
    rows.push_back(row);
  }
  return rows;
}

// A rank's body: device, stream, communicator, then the sweep of each op, reported as rows.
RankBody sweep_body(std::vector<std::string> ops, SweepOptions options) {
  return [ops, options](const Rank& r) {
    Result<CudaContext> device = r.cuda.use_device(r.rank);
    Result<CudaStream> stream = r.cuda.create_stream();
    if (!device || !stream) return r.say("error " + (device ? stream.error() : device.error()) + "\n");
    Result<NcclComm> comm = r.nccl.init_rank(r.nranks, r.id, r.rank);
    if (!comm) return r.say("init-error " + comm.error() + "\n");
    r.say("calling\n");
    const SweepContext context{r.cuda, r.nccl, *comm, *stream, r.rank, r.nranks};
    for (const std::string& op : ops) {
      Result<std::vector<SizeMeasurement>> sweep = run_size_sweep(context, *find_collective(op), options);
      if (!sweep) {
        r.say("sweep-error " + sweep.error() + "\n");
        continue;
      }
      for (const SizeMeasurement& m : *sweep)
        r.say("row " + op + " " + std::to_string(m.bytes) + " " +
              optional_text(std::optional<double>(m.out_of_place_us)) + " " + optional_text(m.in_place_us) +
              " " + optional_text(m.out_of_place_wrong) + " " + optional_text(m.in_place_wrong) + "\n");
    }
    r.say("done\n");
  };
}

bool all_said(const RankProcesses& ranks, const std::string& word) {
  for (int r = 0; r < ranks.count(); ++r)
    if (ranks.output(r).find(word) == std::string::npos) return false;
  return true;
}

SweepOptions small_sweep() {
  SweepOptions options;
  options.min_bytes = 1000;
  options.max_bytes = 4200000;
  options.step_factor = 8;  // 1000, 8000, 64000, 512000, 4096000: chunks, mailboxes, odd counts
  options.iterations = 2;
  options.warmup = 1;
  return options;
}

}  // namespace

TEST(FakeGpuProcesses, EveryCollectiveMovesRealDataAndTakesTheModelsTime) {
  const int nranks = 4;
  std::vector<std::string> ops;
  for (const CollectiveSpec* spec : all_collectives()) ops.emplace_back(spec->name());
  SweepOptions options = small_sweep();
  options.root = 2;
  RankProcesses ranks(
      nranks, {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")}, {"NCCLTUNE_FAKE_TIMEOUT_S", "30"}},
      sweep_body(ops, options));
  ranks.finish(120);

  const FakeModel model = load_fixture("exact.yaml");
  const std::size_t sizes = sweep_sizes(options).size();
  for (int r = 0; r < nranks; ++r) {
    ASSERT_TRUE(WIFEXITED(ranks.status(r)) && WEXITSTATUS(ranks.status(r)) == 0)
        << "rank " << r << ": " << ranks.output(r);
    EXPECT_NE(ranks.output(r).find("done"), std::string::npos) << ranks.output(r);
    const std::vector<Row> rows = rows_of(ranks.output(r));
    ASSERT_EQ(rows.size(), ops.size() * sizes) << ranks.output(r);
    for (const Row& row : rows) {
      SCOPED_TRACE("rank " + std::to_string(r) + " " + row.op + " " + std::to_string(row.bytes));
      EXPECT_EQ(row.out_of_place_wrong, 0);
      const CommModel comm = resolve(model, {}, r, nranks, row.op);
      const double expected = op_time_us(model, comm, row.op, static_cast<double>(row.bytes));
      EXPECT_NEAR(row.out_of_place_us, expected, expected * 1e-5);
      // Every op is timed in place too; alltoall's in-place data is not checked (nccl-tests: N/A).
      ASSERT_TRUE(row.in_place_us.has_value());
      EXPECT_NEAR(*row.in_place_us, expected, expected * 1e-5);
      if (row.op == "alltoall")
        EXPECT_FALSE(row.in_place_wrong.has_value());
      else
        EXPECT_EQ(row.in_place_wrong, 0);
    }
  }
}

TEST(FakeGpuProcesses, SixteenBitAndIntegerTypesReduceExactly) {
  SweepOptions options = small_sweep();
  options.max_bytes = 600000;
  for (DataType type : {DataType::float16, DataType::bfloat16, DataType::int32}) {
    options.type = type;
    RankProcesses ranks(3, {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")}},
                        sweep_body({"all_reduce", "reduce_scatter"}, options));
    ranks.finish(60);
    for (int r = 0; r < 3; ++r) {
      const std::vector<Row> rows = rows_of(ranks.output(r));
      ASSERT_EQ(rows.size(), 2 * sweep_sizes(options).size()) << ranks.output(r);
      for (const Row& row : rows) {
        EXPECT_EQ(row.out_of_place_wrong, 0) << to_string(type) << " " << row.op << " " << row.bytes;
        EXPECT_EQ(row.in_place_wrong, 0) << to_string(type) << " " << row.op << " " << row.bytes;
      }
    }
  }
}

TEST(FakeGpuProcesses, InitErrorFaultFailsEveryInit) {
  RankProcesses ranks(
      4, {{"NCCLTUNE_FAKE_MODEL", model_fixture("fault-init-error.yaml")}, {"NCCL_PROTO", "LL128"}},
      sweep_body({"all_reduce"}, small_sweep()));
  ranks.finish(60);
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(ranks.output(r).find("init-error ncclCommInitRank(rank " + std::to_string(r) +
                                   " of 4): unhandled system error"),
              std::string::npos)
        << ranks.output(r);
    EXPECT_TRUE(WIFEXITED(ranks.status(r)));
  }
}

// NCCL_DEBUG=INFO with NCCL_DEBUG_FILE: one file per process, named by host and pid, whose lines
// nccltune's NCCL log reader takes for what the model's nccl_log section says.
TEST(FakeGpuProcesses, DebugFilesSayWhatTheModelStates) {
  TempDir dir;
  const std::string model = (dir.path() / "model.yaml").string();
  write_file(model, read_file(model_fixture("exact.yaml")) +
                        "nccl_log: {transport: RoCE, devices: [mlx5_0, mlx5_1], gdr: false, nvls: false}\n");
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model},
                   {"NCCLTUNE_EMULATE_NODES", "2"},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "INIT,ENV,NET,TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%h.%p.log").string()},
                   {"NCCL_ALGO", "Ring"}};
  SweepOptions options = small_sweep();
  options.max_bytes = 8000;
  RankProcesses ranks(4, env, sweep_body({"all_reduce"}, options));
  ranks.finish(60);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);

  NcclInfoLogReader reader;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("nccl.")) continue;
    ++files;
    EXPECT_NE(name.find("-node"), std::string::npos) << name << ": %h is the emulated node's host";
    reader.add(read_file(entry.path().string()), name);
  }
  EXPECT_EQ(files, 4);
  const NcclInfoLog log = reader.result();
  EXPECT_EQ(log.ranks, 4);
  EXPECT_EQ(log.nodes, 2);
  EXPECT_EQ(log.transport, "RoCE");
  EXPECT_GT(log.net_connections, 0);
  EXPECT_EQ(log.gdr_connections, 0);
  EXPECT_EQ(log.nvls_available, false);
  EXPECT_EQ(log.env.at("NCCL_ALGO"), "Ring");
  ASSERT_FALSE(log.choices.empty()) << "rank 0 prints a TUNING line per collective";
  for (const NcclLoggedChoice& choice : log.choices) {
    EXPECT_EQ(choice.op, "AllReduce");
    EXPECT_EQ(choice.algo, "RING") << "NCCL_ALGO=Ring";
  }
}

// NCCL's TUNING lines count every rank's part of all_gather and reduce_scatter (nBytes is
// ncclFuncMaxSendRecvCount's): nccl-tests' size, which tune matches them to.
TEST(FakeGpuProcesses, TuningLinesOfAllGatherAndReduceScatterNameTheTotalSize) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  SweepOptions options = small_sweep();
  options.min_bytes = 1024;
  options.max_bytes = 8192;
  options.step_factor = 2;
  RankProcesses ranks(4, env, sweep_body({"all_gather", "reduce_scatter"}, options));
  ranks.finish(60);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  NcclInfoLogReader reader;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    reader.add(read_file(entry.path().string()), entry.path().filename().string());
  std::map<std::string, std::set<int64_t>> sizes;
  for (const NcclLoggedChoice& choice : reader.result().choices)
    sizes[choice.op.value_or("?")].insert(choice.bytes);
  const std::set<int64_t> expected{1024, 2048, 4096, 8192};
  EXPECT_EQ(sizes["AllGather"], expected);
  EXPECT_EQ(sizes["ReduceScatter"], expected);
}

TEST(FakeGpuProcesses, CorruptFaultGivesWrongElements) {
  RankProcesses ranks(4,
                      {{"NCCLTUNE_FAKE_MODEL", model_fixture("fault-corrupt.yaml")},
                       {"NCCL_ALGO", "Ring"},
                       {"NCCL_PROTO", "Simple"}},
                      sweep_body({"all_reduce", "all_gather", "alltoall"}, small_sweep()));
  ranks.finish(120);
  for (int r = 0; r < 4; ++r) {
    const std::vector<Row> rows = rows_of(ranks.output(r));
    ASSERT_EQ(rows.size(), 3 * sweep_sizes(small_sweep()).size()) << ranks.output(r);
    for (const Row& row : rows) {
      EXPECT_GT(row.out_of_place_wrong.value_or(0), 0) << row.op << " " << row.bytes;
      if (row.op != "alltoall") {
        EXPECT_GT(row.in_place_wrong.value_or(0), 0) << row.op;
      }
    }
  }
}

TEST(FakeGpuProcesses, CrashFaultKillsTheProcess) {
  RankProcesses ranks(2, {{"NCCLTUNE_FAKE_MODEL", model_fixture("fault-crash.yaml")}, {"NCCL_PROTO", "LL"}},
                      sweep_body({"all_reduce"}, small_sweep()));
  ranks.finish(60);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(WIFSIGNALED(ranks.status(r)) && WTERMSIG(ranks.status(r)) == SIGABRT)
        << "rank " << r << " status " << ranks.status(r) << ": " << ranks.output(r);
    EXPECT_NE(ranks.output(r).find("calling"), std::string::npos);
    EXPECT_EQ(ranks.output(r).find("row "), std::string::npos);
  }
}

TEST(FakeGpuProcesses, HangFaultNeverReturnsUntilKilled) {
  RankProcesses ranks(2, {{"NCCLTUNE_FAKE_MODEL", model_fixture("fault-hang.yaml")}, {"NCCL_ALGO", "Tree"}},
                      sweep_body({"all_reduce"}, small_sweep()));
  ASSERT_TRUE(ranks.read_until([&] { return all_said(ranks, "calling"); }, 60));
  // The ranks are in their first collective now; give them time to (wrongly) come back.
  EXPECT_FALSE(
      ranks.read_until([&] { return all_said(ranks, "row ") || all_said(ranks, "sweep-error"); }, 1.5));
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(ranks.running(r)) << ranks.output(r);
  ranks.kill_all();
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(WIFSIGNALED(ranks.status(r)) && WTERMSIG(ranks.status(r)) == SIGKILL);
}

TEST(FakeGpuProcesses, SlowRankFaultSlowsOnlyThatRank) {
  SweepOptions options = small_sweep();
  options.max_bytes = 70000;
  RankProcesses ranks(2, {{"NCCLTUNE_FAKE_MODEL", model_fixture("fault-slow-rank.yaml")}},
                      sweep_body({"all_reduce"}, options));
  ranks.finish(60);
  const std::vector<Row> fast = rows_of(ranks.output(0));
  const std::vector<Row> slow = rows_of(ranks.output(1));
  ASSERT_EQ(fast.size(), sweep_sizes(options).size()) << ranks.output(0);
  ASSERT_EQ(slow.size(), fast.size()) << ranks.output(1);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    EXPECT_NEAR(slow[i].out_of_place_us, 2 * fast[i].out_of_place_us, fast[i].out_of_place_us * 1e-5);
    EXPECT_EQ(slow[i].out_of_place_wrong, 0);
  }
}

// NCCLTUNE_EMULATE_NODES=2 puts ranks 0-1 on node 0 and ranks 2-3 on node 1 (forked ranks are
// their own job). A slow node on the network path and a slow link between the two slow every rank
// of the communicator, their factors multiplied; a slow node on the local path and a link to a
// node the communicator lacks do nothing.
TEST(FakeGpuProcesses, NodeFaultsSlowEveryRankOfACommunicatorOnThoseNodes) {
  TempDir dir;
  const std::string path = (dir.path() / "model.yaml").string();
  write_file(path, read_file(model_fixture("exact.yaml")) +
                       "faults:\n"
                       "  - {fault: slow_node, node: 1, factor: 1.5, path: network}\n"
                       "  - {fault: slow_node, node: 0, factor: 7, path: local}\n"
                       "  - {fault: slow_link, nodes: [0, 1], factor: 2}\n"
                       "  - {fault: slow_link, nodes: [1, 2], factor: 5}\n");
  SweepOptions options = small_sweep();
  options.max_bytes = 70000;
  const int nranks = 4;
  RankProcesses ranks(nranks, {{"NCCLTUNE_FAKE_MODEL", path}, {"NCCLTUNE_EMULATE_NODES", "2"}},
                      sweep_body({"all_reduce"}, options));
  ranks.finish(60);
  const FakeModel healthy = load_fixture("exact.yaml");
  for (int r = 0; r < nranks; ++r) {
    const std::vector<Row> rows = rows_of(ranks.output(r));
    ASSERT_EQ(rows.size(), sweep_sizes(options).size()) << ranks.output(r);
    const CommModel comm = resolve(healthy, {}, r, nranks);
    for (const Row& row : rows) {
      const double expected =
          1.5 * 2 * op_time_us(healthy, comm, "all_reduce", static_cast<double>(row.bytes));
      EXPECT_NEAR(row.out_of_place_us, expected, expected * 1e-5) << "rank " << r << " " << row.bytes << " B";
      EXPECT_EQ(row.out_of_place_wrong, 0);
    }
  }
}

// A hang on node 1 fires on its ranks only: node 0's ranks give up waiting for them after
// NCCLTUNE_FAKE_TIMEOUT_S, as they would on a job with one hung node.
TEST(FakeGpuProcesses, HangOnANodeHangsOnlyThatNodesRanks) {
  TempDir dir;
  const std::string path = (dir.path() / "model.yaml").string();
  write_file(path, read_file(model_fixture("exact.yaml")) + "faults: [{fault: hang, node: 1}]\n");
  RankProcesses ranks(
      4, {{"NCCLTUNE_FAKE_MODEL", path}, {"NCCLTUNE_EMULATE_NODES", "2"}, {"NCCLTUNE_FAKE_TIMEOUT_S", "3"}},
      sweep_body({"all_reduce"}, small_sweep()));
  ASSERT_TRUE(ranks.read_until(
      [&] {
        return ranks.output(0).find("done") != std::string::npos &&
               ranks.output(1).find("done") != std::string::npos;
      },
      60))
      << ranks.output(0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(ranks.output(r).find("sweep-error"), std::string::npos) << ranks.output(r);
    EXPECT_EQ(ranks.output(r).find("row "), std::string::npos) << ranks.output(r);
  }
  for (int r = 2; r < 4; ++r) {
    EXPECT_NE(ranks.output(r).find("calling"), std::string::npos) << ranks.output(r);
    EXPECT_EQ(ranks.output(r).find("sweep-error"), std::string::npos) << ranks.output(r);
    EXPECT_TRUE(ranks.running(r)) << "rank " << r << ": " << ranks.output(r);
  }
  ranks.kill_all();
  for (int r = 2; r < 4; ++r)
    EXPECT_TRUE(WIFSIGNALED(ranks.status(r)) && WTERMSIG(ranks.status(r)) == SIGKILL);
}

TEST(FakeGpuProcesses, AMissingRankFailsInitAfterTheTimeout) {
  RankProcesses ranks(
      2, {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")}, {"NCCLTUNE_FAKE_TIMEOUT_S", "0.5"}},
      sweep_body({"all_reduce"}, small_sweep()), /*started=*/1);
  ranks.finish(60);
  EXPECT_NE(ranks.output(0).find("init-error ncclCommInitRank(rank 0 of 2): unhandled system error"),
            std::string::npos)
      << ranks.output(0);
  EXPECT_TRUE(WIFEXITED(ranks.status(0)));
}

TEST(FakeGpuProcesses, InitNeedsACurrentContext) {
  RankProcesses ranks(1, {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")}}, [](const Rank& r) {
    Result<NcclComm> comm = r.nccl.init_rank(1, r.id, 0);
    r.say(comm ? "initialized\n" : "init-error " + comm.error() + "\n");
  });
  ranks.finish(30);
  EXPECT_NE(ranks.output(0).find("init-error ncclCommInitRank(rank 0 of 1): invalid usage"),
            std::string::npos)
      << ranks.output(0);
}

// The model's collectives section, as the fake NCCL applies it: each op runs under its own entry.
TEST(FakeGpuProcesses, EachCollectiveRunsUnderItsOwnEntry) {
  TempDir dir;
  const std::string path = (dir.path() / "model.yaml").string();
  write_file(path, read_file(model_fixture("exact.yaml")) +
                       "collectives:\n"
                       "  reduce_scatter:\n"
                       "    effects: [{when: {NCCL_MIN_NCHANNELS: \"32\"}, busbw_scale: 0.5}]\n"
                       "  alltoall:\n"
                       "    faults: [{when: {NCCL_PROTO: Simple}, fault: corrupt}]\n");
  const NcclEnv nccl_env = {{"NCCL_PROTO", "Simple"}, {"NCCL_MIN_NCHANNELS", "32"}};
  const Env env = {{"NCCLTUNE_FAKE_MODEL", path}, {"NCCL_PROTO", "Simple"}, {"NCCL_MIN_NCHANNELS", "32"}};
  const int nranks = 4;
  RankProcesses ranks(nranks, env, sweep_body({"all_reduce", "reduce_scatter", "alltoall"}, small_sweep()));
  ranks.finish(120);

  Result<FakeModel> model = parse_fake_model(read_file(path), path);
  ASSERT_TRUE(model.ok()) << model.error();
  for (int r = 0; r < nranks; ++r) {
    const std::vector<Row> rows = rows_of(ranks.output(r));
    ASSERT_EQ(rows.size(), 3 * sweep_sizes(small_sweep()).size()) << ranks.output(r);
    for (const Row& row : rows) {
      SCOPED_TRACE("rank " + std::to_string(r) + " " + row.op + " " + std::to_string(row.bytes));
      const FakeModel op_model = model_for_collective(*model, row.op);
      const double expected = op_time_us(op_model, resolve(op_model, nccl_env, r, nranks, row.op), row.op,
                                         static_cast<double>(row.bytes));
      EXPECT_NEAR(row.out_of_place_us, expected, expected * 1e-5);
      if (row.op == "alltoall")
        EXPECT_GT(row.out_of_place_wrong.value_or(0), 0);
      else
        EXPECT_EQ(row.out_of_place_wrong, 0);
    }
  }
  // reduce_scatter's own effect halves its bandwidth; all_reduce keeps the top level's.
  const FakeModel top = model_for_collective(*model, "all_reduce");
  const FakeModel scatter = model_for_collective(*model, "reduce_scatter");
  EXPECT_GT(
      op_time_us(scatter, resolve(scatter, nccl_env, 0, nranks, "reduce_scatter"), "reduce_scatter", 4096000),
      op_time_us(top, resolve(top, nccl_env, 0, nranks, "reduce_scatter"), "reduce_scatter", 4096000));
}

// NCCL reads NCCL_ALGO / NCCL_PROTO as a filter and still chooses with its cost model, so a list
// that allows every algorithm and protocol changes nothing: on every model of
// tests/fixtures/models, forked ranks under that list take the defaults' times (the same noise
// draws, so the same numbers) for every collective and size.
TEST(FakeGpuProcesses, AListThatAllowsTheDefaultPairTakesTheDefaultsTimes) {
  const int nranks = 4;
  std::vector<std::string> ops;
  for (const CollectiveSpec* spec : all_collectives()) ops.emplace_back(spec->name());
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test_support::fixture("models"))) {
    const FakeModel model = load_fixture(entry.path().filename().string());
    bool defaults_fault = false;
    std::set<std::string> algos, protos;
    for (const std::string& op : ops) {
      const FakeModel op_model = model_for_collective(model, op);
      for (int r = 0; r < nranks; ++r)
        defaults_fault = defaults_fault || !resolve(op_model, {}, r, nranks).faults.empty();
      for (const auto& [algo, costs] : op_model.algos) {
        algos.insert(algo);
        for (const auto& [proto, cost] : costs.protos) protos.insert(proto);
      }
    }
    if (defaults_fault) continue;  // slow_rank and the like: nothing to compare with
    ++models;
    const auto list = [](const std::set<std::string>& names) {
      std::string text;
      for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
      return text;
    };
    const Env defaults{{"NCCLTUNE_FAKE_MODEL", entry.path().string()}, {"NCCLTUNE_FAKE_TIMEOUT_S", "30"}};
    Env listed = defaults;
    listed.emplace_back("NCCL_ALGO", list(algos));
    listed.emplace_back("NCCL_PROTO", list(protos));
    // Sizes in the first two ranges of every model's default table; no data check and one timed
    // iteration, since only the times are compared (other tests check the data).
    SweepOptions sweep = small_sweep();
    sweep.max_bytes = 600000;
    sweep.iterations = 1;
    sweep.warmup = 0;
    sweep.check = false;
    sweep.in_place = false;
    RankProcesses own(nranks, defaults, sweep_body(ops, sweep));
    own.finish(120);
    RankProcesses filtered(nranks, listed, sweep_body(ops, sweep));
    filtered.finish(120);
    for (int r = 0; r < nranks; ++r) {
      SCOPED_TRACE(entry.path().filename().string() + " rank " + std::to_string(r) +
                   " NCCL_ALGO=" + list(algos) + " NCCL_PROTO=" + list(protos));
      const std::vector<Row> expected = rows_of(own.output(r));
      const std::vector<Row> rows = rows_of(filtered.output(r));
      ASSERT_EQ(expected.size(), ops.size() * sweep_sizes(sweep).size()) << own.output(r);
      ASSERT_EQ(rows.size(), expected.size()) << filtered.output(r);
      for (std::size_t i = 0; i < rows.size(); ++i)
        EXPECT_DOUBLE_EQ(rows[i].out_of_place_us, expected[i].out_of_place_us)
            << rows[i].op << " " << rows[i].bytes << " B";
    }
  }
  EXPECT_GE(models, 10);
}

// ---------------------------------------------------------------------------------------------
// Start-up cost (init_cost_ms) and tuner plugins (tests/fake-gpu/README.md)

TEST(FakeGpuModel, InitCostIsReadStrictly) {
  Result<FakeModel> model =
      parse_fake_model(kMinimal + "init_cost_ms: {cuda_context: 400, nccl_comm: 1200}\n", "model.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_EQ(model->init_cost.cuda_context_ms, 400);
  EXPECT_EQ(model->init_cost.nccl_comm_ms, 1200);
  EXPECT_EQ(model->init_cost.split_ms(), 1200);  // a split without its own cost pays an init's
  model = parse_fake_model(kMinimal + "init_cost_ms: {nccl_comm: 5, nccl_split: 2}\n", "model.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  EXPECT_EQ(model->init_cost.cuda_context_ms, 0);
  EXPECT_EQ(model->init_cost.split_ms(), 2);
  EXPECT_NE(fake_model_error(kMinimal + "init_cost_ms: {nccl_split: -1}\n").find("init_cost_ms.nccl_split"),
            std::string::npos);
  EXPECT_EQ(load_fixture("exact.yaml").init_cost.nccl_comm_ms, 0);
  EXPECT_NE(fake_model_error(kMinimal + "init_cost_ms: {cuda_context: 1, nccl: 2}\n").find("init_cost_ms"),
            std::string::npos);
  EXPECT_NE(fake_model_error(kMinimal + "init_cost_ms: {cuda_context: 1, nccl: 2}\n").find("nccl"),
            std::string::npos);
  EXPECT_NE(fake_model_error(kMinimal + "init_cost_ms: {nccl_comm: -1}\n").find("init_cost_ms.nccl_comm"),
            std::string::npos);
  EXPECT_NE(fake_model_error(kMinimal + "init_cost_ms: {nccl_comm: 1.5}\n").find("init_cost_ms.nccl_comm"),
            std::string::npos);
  EXPECT_NE(fake_model_error(kMinimal + "init_cost_ms: 5\n").find("init_cost_ms"), std::string::npos);
}

namespace {

// A test plugin built next to libfakenccl.so (tests/fake-gpu/fake_test_tuner.cpp).
std::string test_tuner(const std::string& file) {
  return (std::filesystem::path(NCCLTUNE_FAKENCCL).parent_path() / file).string();
}

// The TUNING choices of every NCCL_DEBUG_FILE in `dir`.
std::vector<NcclLoggedChoice> logged_choices(const std::filesystem::path& dir) {
  NcclInfoLogReader reader;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    reader.add(read_file(entry.path().string()), entry.path().filename().string());
  return reader.result().choices;
}

std::string all_logs(const std::filesystem::path& dir) {
  std::string text;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) text += read_file(entry.path().string());
  return text;
}

}  // namespace

// The cost is a sleep: a lower bound only, never an upper one (a loaded machine is slower).
TEST(FakeGpuProcesses, StartUpCostsAreSleptAtTheFirstContextAndEveryInit) {
  const RankBody body = [](const Rank& r) {
    using Clock = std::chrono::steady_clock;
    const auto ms = [](Clock::duration d) {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    };
    const auto start = Clock::now();
    Result<CudaContext> device = r.cuda.use_device(r.rank);
    const auto context_done = Clock::now();
    Result<CudaContext> again = r.cuda.use_device(r.rank);  // not the first context: no cost
    const auto again_done = Clock::now();
    if (!device || !again) return r.say("error " + (device ? again.error() : device.error()) + "\n");
    Result<NcclComm> comm = r.nccl.init_rank(r.nranks, r.id, r.rank);
    const auto comm_done = Clock::now();
    if (!comm) return r.say("init-error " + comm.error() + "\n");
    r.say("times " + ms(context_done - start) + " " + ms(comm_done - again_done) + "\ndone\n");
  };
  RankProcesses ranks(2, {{"NCCLTUNE_FAKE_MODEL", model_fixture("startup-cost.yaml")}}, body);
  ranks.finish(60);
  for (int r = 0; r < 2; ++r) {
    const std::string& out = ranks.output(r);
    const std::size_t at = out.find("times ");
    ASSERT_NE(at, std::string::npos) << out;
    std::istringstream in(out.substr(at + 6));
    long context_ms = 0, comm_ms = 0;
    in >> context_ms >> comm_ms;
    EXPECT_GE(context_ms, 300) << out;
    EXPECT_GE(comm_ms, 900) << out;
  }
}

// A v5 plugin that marks Tree/Simple at cost 0 makes every all_reduce run Tree/Simple: the TUNING
// lines say so and each op takes Tree/Simple's time, whatever the model's own choice. AllGather has
// no Tree cell in NCCL's table (the plugin's mark is ignored): it runs NCCL's own choice.
TEST(FakeGpuProcesses, ATunerPluginsLowestCostPairRunsAndTakesItsTime) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_TUNER_PLUGIN", test_tuner("libfake_test_tuner.so")},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  SweepOptions options = small_sweep();  // 1000 B (Tree/LL by default) to 4 MB (Ring/LL128)
  RankProcesses ranks(4, env, sweep_body({"all_reduce", "all_gather"}, options));
  ranks.finish(120);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  const std::vector<NcclLoggedChoice> choices = logged_choices(dir.path());
  ASSERT_FALSE(choices.empty());
  for (const NcclLoggedChoice& choice : choices) {
    if (choice.op == "AllGather") {
      EXPECT_EQ(choice.algo, "RING") << choice.bytes;
      continue;
    }
    EXPECT_EQ(choice.algo, "TREE") << choice.bytes;
    EXPECT_EQ(choice.proto, "SIMPLE") << choice.bytes;
  }
  const std::string logs = all_logs(dir.path());
  EXPECT_NE(logs.find("TUNER/Plugin: Using fake_test (v5)"), std::string::npos) << logs;
  EXPECT_NE(logs.find("TUNER/fake_test: init for 4 ranks on 1 nodes"), std::string::npos) << logs;
  EXPECT_NE(logs.find("TUNER/Plugin: Closing tuner: 'fake_test'"), std::string::npos) << logs;

  const FakeModel model = load_fixture("exact.yaml");
  const AlgoProto tree_simple{"Tree", "Simple"};
  for (int r = 0; r < 4; ++r) {
    const std::vector<Row> rows = rows_of(ranks.output(r));
    ASSERT_EQ(rows.size(), 2 * sweep_sizes(options).size()) << ranks.output(r);
    for (const Row& row : rows) {
      SCOPED_TRACE(row.op + " " + std::to_string(row.bytes));
      const CommModel comm = resolve(model, {}, r, 4, row.op);
      const double own = op_time_us(model, comm, row.op, static_cast<double>(row.bytes));
      if (row.op == "all_gather") {
        EXPECT_NEAR(row.out_of_place_us, own, own * 1e-5);
        continue;
      }
      const double expected = pair_time_us(model, comm, tree_simple, row.op, static_cast<double>(row.bytes));
      EXPECT_NEAR(row.out_of_place_us, expected, expected * 1e-5);
      // Tree/Simple is not the model's choice at these sizes: the plugin changed the time.
      EXPECT_GT(std::abs(own - expected), expected * 1e-3);
    }
  }
}

// F15: a group's collectives of one function, reduction and type within 4x of the smallest are one
// batch: NCCL (and its tuner plugin) is asked once with their summed size, and each runs that pair.
TEST(FakeGpuProcesses, AGroupsCollectivesAreAskedForAsBatches) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_TUNER_PLUGIN", test_tuner("libfake_test_tuner.so")},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  const RankBody body = [](const Rank& r) {
    Result<CudaContext> device = r.cuda.use_device(r.rank);
    Result<CudaStream> stream = r.cuda.create_stream();
    Result<DeviceBuffer> buffer = r.cuda.allocate(64000);
    if (!device || !stream || !buffer) return r.say("error\n");
    Result<NcclComm> comm = r.nccl.init_rank(r.nranks, r.id, r.rank);
    if (!comm) return r.say("init-error " + comm.error() + "\n");
    const NcclApi& api = r.nccl.api();
    auto all_reduce = [&](std::size_t floats) {
      return api.ncclAllReduce(buffer->data(), buffer->data(), floats, nccl_abi::ncclFloat32, nccl_abi::ncclSum,
                               comm->get(), stream->get());
    };
    // 4000 and 8000 B are one batch (12000 B); 32000 B is 8x the first: a batch of its own.
    bool ok = api.ncclGroupStart() == nccl_abi::ncclSuccess && all_reduce(1000) == nccl_abi::ncclSuccess &&
              all_reduce(8000) == nccl_abi::ncclSuccess && all_reduce(2000) == nccl_abi::ncclSuccess &&
              api.ncclGroupEnd() == nccl_abi::ncclSuccess;
    ok = ok && all_reduce(3500) == nccl_abi::ncclSuccess;  // alone: asked for its own size
    r.say(ok ? "done\n" : "call-error\n");
  };
  RankProcesses ranks(2, env, body);
  ranks.finish(60);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  const std::string logs = all_logs(dir.path());
  for (const char* asked : {"getCollInfo func 4 nBytes 12000", "getCollInfo func 4 nBytes 32000",
                            "getCollInfo func 4 nBytes 14000"})
    EXPECT_NE(logs.find(asked), std::string::npos) << asked << "\n" << logs;
  EXPECT_EQ(logs.find("nBytes 4000"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("nBytes 8000\n"), std::string::npos) << logs;
  // Every call of a batch runs the batch's pair (the plugin's Tree/Simple); the TUNING lines name
  // each call by its own size.
  const std::vector<NcclLoggedChoice> choices = logged_choices(dir.path());
  ASSERT_EQ(choices.size(), 4u);
  for (const NcclLoggedChoice& choice : choices) EXPECT_EQ(choice.algo + "/" + choice.proto, "TREE/SIMPLE");
}

// Without NCCL_TUNER_PLUGIN (or with "none") the same sweep runs the model's own pairs.
TEST(FakeGpuProcesses, WithoutATunerPluginTheModelsPairsRun) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_TUNER_PLUGIN", "none"},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  SweepOptions options = small_sweep();
  RankProcesses ranks(4, env, sweep_body({"all_reduce"}, options));
  ranks.finish(120);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  const FakeModel model = load_fixture("exact.yaml");
  const CommModel comm = resolve(model, {}, 0, 4);
  const std::vector<NcclLoggedChoice> choices = logged_choices(dir.path());
  ASSERT_FALSE(choices.empty());
  for (const NcclLoggedChoice& choice : choices) {
    const AlgoProto own = choose_algo_proto(model, comm, "all_reduce", static_cast<double>(choice.bytes));
    EXPECT_EQ(choice.algo, own.algo == "Tree" ? "TREE" : "RING") << choice.bytes;
  }
}

// NCCL 2.28.9 checks init's result (NCCLCHECK in initTransportsRank, src/init.cc): a plugin whose
// init fails fails ncclCommInitRank with that result, with one WARN line.
TEST(FakeGpuProcesses, ATunerPluginWhoseInitFailsFailsTheCommunicator) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCLTUNE_FAKE_TIMEOUT_S", "10"},
                   {"NCCL_TUNER_PLUGIN", test_tuner("libfake_test_tuner_fail.so")},
                   {"NCCL_DEBUG", "WARN"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  RankProcesses ranks(2, env, sweep_body({"all_reduce"}, small_sweep()));
  ranks.finish(60);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(ranks.output(r).find("init-error"), std::string::npos) << ranks.output(r);
    EXPECT_EQ(ranks.output(r).find("row "), std::string::npos) << ranks.output(r);
  }
  const std::string logs = all_logs(dir.path());
  EXPECT_NE(logs.find("NCCL WARN tuner plugin"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("NCCL INFO"), std::string::npos) << logs;  // NCCL_DEBUG=WARN
}

// A plugin that cannot be found leaves NCCL's own choices, as NCCL does (an INFO line).
TEST(FakeGpuProcesses, AMissingTunerPluginLeavesTheModelsChoices) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_TUNER_PLUGIN", "no-such-tuner"},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  SweepOptions options = small_sweep();
  options.max_bytes = 1000;
  RankProcesses ranks(2, env, sweep_body({"all_reduce"}, options));
  ranks.finish(60);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  const std::string logs = all_logs(dir.path());
  EXPECT_NE(logs.find("TUNER/Plugin: Could not find: no-such-tuner libnccl-tuner-no-such-tuner.so"),
            std::string::npos)
      << logs;
  for (const NcclLoggedChoice& choice : logged_choices(dir.path())) EXPECT_EQ(choice.algo, "TREE");
}

// With NCCL_TUNER_PLUGIN unset NCCL looks for libnccl-tuner.so on the library path, and says so
// when it is not there (ncclTunerPluginLoad, openPluginLib; FIDELITY.md F35).
TEST(FakeGpuProcesses, AnUnsetTunerPluginLooksForTheDefaultLibrary) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  ASSERT_EQ(std::getenv("NCCL_TUNER_PLUGIN"), nullptr);
  SweepOptions options = small_sweep();
  options.max_bytes = 1000;
  RankProcesses ranks(2, env, sweep_body({"all_reduce"}, options));
  ranks.finish(60);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  const std::string logs = all_logs(dir.path());
  EXPECT_NE(logs.find("NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so\n"), std::string::npos) << logs;
  for (const NcclLoggedChoice& choice : logged_choices(dir.path())) EXPECT_EQ(choice.algo, "TREE");
}

// NCCL_NVLS_ENABLE=1 on GPUs without multicast: NCCL's multicast setup fails, and init with it,
// with CUCHECK's WARN and ncclUnhandledCudaError (FIDELITY.md F33). 2, NCCL's default, inits.
TEST(FakeGpuProcesses, NvlsEnableOneWithoutMulticastFailsInit) {
  for (const char* value : {"1", "2"}) {
    TempDir dir;
    const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("nccl-rules-socket.yaml")},
                     {"NCCLTUNE_FAKE_TIMEOUT_S", "10"},
                     {"NCCL_NVLS_ENABLE", value},
                     {"NCCL_DEBUG", "WARN"},
                     {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
    SweepOptions options = small_sweep();
    options.max_bytes = 1000;
    RankProcesses ranks(2, env, sweep_body({"all_reduce"}, options));
    ranks.finish(60);
    const std::string logs = all_logs(dir.path());
    if (std::string(value) == "2") {
      EXPECT_TRUE(all_said(ranks, "done")) << ranks.output(0);
      EXPECT_EQ(logs.find("NCCL WARN"), std::string::npos) << logs;
      continue;
    }
    for (int r = 0; r < 2; ++r)
      EXPECT_NE(ranks.output(r).find("init-error ncclCommInitRank(rank " + std::to_string(r) +
                                     " of 2): unhandled cuda error"),
                std::string::npos)
          << ranks.output(r);
    EXPECT_NE(logs.find("NCCL WARN Cuda failure 801 'operation not supported'"), std::string::npos) << logs;
  }
}

// One rank: ncclLaunchOneRank before any planning (FIDELITY.md F36): the data is right, NCCL never
// asks a tuner plugin, prints no TUNING line, and no NCCL_ALGO leaves it without an algorithm.
TEST(FakeGpuProcesses, OneRankRunsWithoutAnAlgorithmOrAPlugin) {
  TempDir dir;
  const Env env = {{"NCCLTUNE_FAKE_MODEL", model_fixture("exact.yaml")},
                   {"NCCL_TUNER_PLUGIN", test_tuner("libfake_test_tuner.so")},
                   {"NCCL_ALGO", "CollNetDirect"},
                   {"NCCL_DEBUG", "INFO"},
                   {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
                   {"NCCL_DEBUG_FILE", (dir.path() / "nccl.%p.log").string()}};
  SweepOptions options = small_sweep();
  options.max_bytes = 4096;
  RankProcesses ranks(1, env, sweep_body({"all_reduce", "all_gather"}, options));
  ranks.finish(60);
  ASSERT_TRUE(all_said(ranks, "done")) << ranks.output(0);
  const std::vector<Row> rows = rows_of(ranks.output(0));
  EXPECT_EQ(rows.size(), 2 * sweep_sizes(options).size()) << ranks.output(0);
  for (const Row& row : rows) EXPECT_EQ(row.out_of_place_wrong, 0) << row.op << " " << row.bytes;
  const std::string logs = all_logs(dir.path());
  EXPECT_NE(logs.find("TUNER/fake_test: init for 1 ranks on 1 nodes"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("getCollInfo"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("Bytes -> Algo"), std::string::npos) << logs;
}
