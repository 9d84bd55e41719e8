// Where NCCL trusts LL128, what a split that shares its parent's resources gets, how cost-table
// ties are broken and how NCCL before 2.24.3 reads a scoped list: each test pins a row of
// tests/fake-gpu/FIDELITY.md (F37-F39).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/nccl_library.h"
#include "comm_model.h"
#include "fake_model.h"
#include "fake_model_errors.h"
#include "fake_world.h"
#include "ll128_trust.h"
#include "nccl_env.h"
#include "split_share.h"
#include "tuner_plugin_host.h"

namespace nccltune::fake {
namespace {

using test_support::fake_model_error;

// A model with Ring and Tree in every protocol; `more` is appended (devices, paths, nccl_log).
std::string trust_model(const std::string& more = "") {
  return R"(schema: nccltune/fake-model/v1
default: [{max_bytes: 65536, algo: Tree, proto: LL}, {algo: Ring, proto: Simple}]
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 300}}
)" + more;
}

FakeModel parsed_model(const std::string& text) {
  Result<FakeModel> model = parse_fake_model(text, "model.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : FakeModel{};
}

// Whether NCCL trusts LL128 on `nodes` nodes of `local_ranks` GPUs each ("" is trusted).
bool trusted(const FakeModel& model, const NcclEnv& env = {}, int nodes = 2, int local_ranks = 4) {
  return why_ll128_untrusted(model, env, nodes, local_ranks).empty();
}

CommModel trust_comm(const FakeModel& model, const NcclEnv& env, int nodes,
                     std::string_view op = "all_reduce") {
  CommNodes placed;
  placed.present.clear();
  for (int node = 0; node < nodes; ++node) placed.present.push_back(node);
  placed.count = nodes;
  placed.fewest_local_ranks = 4;
  Result<CommModel> comm = resolve_comm_model(model, env, 0, 4 * nodes, op, placed);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

bool allows_pair(const CommModel& comm, const std::string& algo, const std::string& proto) {
  return std::find(comm.allowed.begin(), comm.allowed.end(), AlgoProto{algo, proto}) != comm.allowed.end();
}

// F37: NCCL trusts LL128 where its graphs stay on NVLink within a node (up to NVB) and reach the
// NIC up to PXN on SM90+ (NCCL_LL128_C2C) or PXB otherwise, on GPUs of SM70+ of one compute
// capability; the path knobs move the paths.
TEST(NcclLl128Trust, PathKnobsTurnItOffAsNcclsPathsMove) {
  const FakeModel nvlink = parsed_model(trust_model());  // H100s, NVL between GPUs, PIX to the NIC
  EXPECT_TRUE(trusted(nvlink));
  EXPECT_TRUE(allows_pair(trust_comm(nvlink, {}, 2), "Ring", "LL128"));
  // NCCL_P2P_DISABLE=1 and a level below NVL send GPU traffic through the CPU (PHB).
  for (const NcclEnv& env : {NcclEnv{{"NCCL_P2P_DISABLE", "1"}}, NcclEnv{{"NCCL_P2P_LEVEL", "LOC"}},
                             NcclEnv{{"NCCL_P2P_LEVEL", "0"}}}) {
    EXPECT_FALSE(trusted(nvlink, env)) << env.begin()->first << "=" << env.begin()->second;
    EXPECT_FALSE(allows_pair(trust_comm(nvlink, env, 2), "Ring", "LL128"));
    EXPECT_FALSE(allows_pair(trust_comm(nvlink, env, 2), "Tree", "LL128"));
    // One GPU per node has no GPU-to-GPU path (LOC): nothing to divert.
    EXPECT_TRUE(trusted(nvlink, env, 2, 1));
    // An NCCL_PROTO entry still turns it on (parseList writes 1, F7).
    NcclEnv listed = env;
    listed["NCCL_PROTO"] = "LL128,Simple";
    EXPECT_TRUE(allows_pair(trust_comm(nvlink, listed, 2), "Ring", "LL128"));
  }
  // NVL and above keep P2P; NCCL_P2P_DISABLE=0 and a misspelt level (strcmp) change nothing.
  for (const NcclEnv& env : {NcclEnv{{"NCCL_P2P_LEVEL", "NVL"}}, NcclEnv{{"NCCL_P2P_LEVEL", "SYS"}},
                             NcclEnv{{"NCCL_P2P_DISABLE", "0"}}, NcclEnv{{"NCCL_P2P_LEVEL", "loc"}}})
    EXPECT_TRUE(trusted(nvlink, env)) << env.begin()->first << "=" << env.begin()->second;

  // PCIe between the GPUs: never trusted, whatever the knobs.
  const FakeModel pcie = parsed_model(trust_model("paths: {gpu: PXB}\n"));
  EXPECT_FALSE(trusted(pcie, {}, 1));
  EXPECT_FALSE(allows_pair(trust_comm(pcie, {}, 1), "Ring", "LL128"));
  EXPECT_EQ(why_ll128_untrusted(pcie, {}, 1, 4), "GPU-to-GPU path PXB is beyond NVB");

  // PXN to the NIC: trusted on SM90+ with NCCL_LL128_C2C at its default 1; NCCL_PXN_DISABLE=1
  // leaves the GPU its own path through the CPU, and NCCL_LL128_C2C=0 stops at PXB.
  const FakeModel pxn = parsed_model(trust_model("paths: {gpu: NVL, nic: PXN}\n"));
  EXPECT_TRUE(trusted(pxn));
  EXPECT_TRUE(trusted(pxn, {}, 1));  // one node: no network
  EXPECT_FALSE(trusted(pxn, {{"NCCL_PXN_DISABLE", "1"}}));
  EXPECT_TRUE(trusted(pxn, {{"NCCL_PXN_DISABLE", "0"}}));
  EXPECT_FALSE(trusted(pxn, {{"NCCL_P2P_DISABLE", "1"}}, 2, 4));  // the relay GPU is reached over P2P
  EXPECT_FALSE(trusted(pxn, {{"NCCL_LL128_C2C", "0"}}));
  EXPECT_EQ(why_ll128_untrusted(pxn, {{"NCCL_LL128_C2C", "0"}}, 2, 4), "GPU-to-NIC path PXN is beyond PXB");
  // NCCL_LL128_C2C exists from 2.27.3; before, SM90+ went up to PXN.
  FakeModel older = pxn;
  older.nccl_version = 22603;
  EXPECT_TRUE(trusted(older, {{"NCCL_LL128_C2C", "0"}}));
  // Grace's C2C path (P2C) is within PXN.
  EXPECT_TRUE(trusted(parsed_model(trust_model("paths: {nic: P2C}\n"))));

  // No GPUDirect RDMA (a Socket network): traffic to the NIC goes through the CPU.
  const FakeModel socket =
      parsed_model(trust_model("nccl_log: {transport: Socket, devices: [eth0], gdr: false}\n"));
  EXPECT_FALSE(trusted(socket));
  EXPECT_TRUE(trusted(socket, {}, 1));
  EXPECT_TRUE(allows_pair(trust_comm(socket, {}, 1), "Ring", "LL128"));
  EXPECT_FALSE(allows_pair(trust_comm(socket, {}, 2), "Ring", "LL128"));
}

// F37: compute capabilities. Below SM70 never; mixed ones never at 2.28.9, and from 2.30.3 when
// all are SM90 or more. Ampere stops at PXB.
TEST(NcclLl128Trust, ComputeCapabilitiesAsEachNcclVersionReadsThem) {
  const std::string mixed_devices =
      "devices: [{name: H100, pci: '0000:18:00.0', sm: 90}, "
      "{name: B200, pci: '0000:19:00.0', sm: 100}]\n";
  FakeModel mixed = parsed_model(trust_model(mixed_devices));
  EXPECT_EQ(why_ll128_untrusted(mixed, {}, 1, 2), "GPUs of different compute capabilities");
  mixed.nccl_version = 23007;
  EXPECT_TRUE(trusted(mixed, {}, 1, 2));
  EXPECT_TRUE(trusted(mixed, {}, 1, 1)) << "one GPU of the two: one compute capability";
  FakeModel ampere_mixed = parsed_model(trust_model(
      "devices: [{name: A100, pci: '0000:18:00.0', sm: 80}, {name: H100, pci: '0000:19:00.0', sm: 90}]\n"));
  ampere_mixed.nccl_version = 23007;
  EXPECT_FALSE(trusted(ampere_mixed, {}, 1, 2));

  const std::string a100 = "devices: [{name: A100, pci: '0000:18:00.0', sm: 80}]\n";
  EXPECT_TRUE(trusted(parsed_model(trust_model(a100 + "paths: {nic: PXB}\n"))));
  EXPECT_FALSE(trusted(parsed_model(trust_model(a100 + "paths: {nic: PXN}\n"))));
  EXPECT_EQ(
      why_ll128_untrusted(parsed_model(trust_model("devices: [{name: P100, pci: '0000:18:00.0', sm: 60}]\n")),
                          {}, 1, 4),
      "GPUs below SM70");
}

// F37: a model cannot make LL128 NCCL's default where NCCL does not trust it, and `paths` takes
// NCCL's spellings only.
TEST(NcclLl128Trust, ModelsStateOnlyPathsNcclCanHave) {
  const std::string ll128_default = R"(schema: nccltune/fake-model/v1
default: [{algo: Ring, proto: LL128}]
algos:
  Ring: {LL128: {lat_us: 16, busbw_gbps: 300}}
)";
  EXPECT_EQ(fake_model_error(ll128_default), "(parsed)");
  EXPECT_NE(fake_model_error(ll128_default + "paths: {gpu: PHB}\n").find("NCCL does not trust there"),
            std::string::npos);
  // A 2-node entry without GDR: the NIC path is through the CPU.
  EXPECT_NE(
      fake_model_error(ll128_default + "nccl_log: {gdr: false}\n"
                                       "nodes: [{min_nodes: 2, default: [{algo: Ring, proto: LL128}]}]\n")
          .find("all_reduce on 2 node(s) runs a default of Ring/LL128, which NCCL does not trust there"),
      std::string::npos);
  EXPECT_NE(fake_model_error(trust_model("paths: {gpu: nvl}\n")).find("paths.gpu"), std::string::npos);
  EXPECT_NE(fake_model_error(trust_model("paths: {nic: NVL}\n")).find("paths.nic"), std::string::npos);
  EXPECT_NE(fake_model_error(trust_model("paths: {gpu: PIX, nic: PXN}\n")).find("PXN needs NVLink"),
            std::string::npos);
  EXPECT_NE(fake_model_error(trust_model("paths: {gpu: NVL, cpu: SYS}\n")).find("paths: unknown key 'cpu'"),
            std::string::npos);
}

// F38: topoGetAlgoInfo's strict `<` over the table in row order (algorithms Tree, Ring, ...,
// then protocols LL, LL128, Simple): ties go to the first cell, whatever the model's own pick.
TEST(NcclCostTies, TiesGoToTheFirstCellInRowOrder) {
  CostTable table;
  for (auto& row : table) row.fill(tuner_abi::kAlgoProtoIgnore);
  const auto set = [&](const AlgoProto& pair, float us) {
    const auto cell = cost_table_cell(pair);
    ASSERT_TRUE(cell.has_value());
    table[cell->first][cell->second] = us;
  };
  set({"Ring", "Simple"}, 10);
  set({"Ring", "LL"}, 10);
  set({"Tree", "Simple"}, 12);
  EXPECT_EQ(lowest_cost_pair(table), (AlgoProto{"Ring", "LL"}));
  set({"Tree", "Simple"}, 10);
  EXPECT_EQ(lowest_cost_pair(table), (AlgoProto{"Tree", "Simple"}));
  // A default model's own pick is entered just below the lowest, so NCCL's `<` picks it.
  set({"Ring", "Simple"}, below_lowest(10));
  EXPECT_EQ(lowest_cost_pair(table), (AlgoProto{"Ring", "Simple"}));
  EXPECT_LT(below_lowest(10), 10.0f);
  EXPECT_EQ(below_lowest(0), 0.0f);
}

// F38: with its own pick excluded, a default model's stand-in for NCCL's cost model breaks ties
// in NCCL's row order too (Tree before Ring), not in the model's (alphabetical) order.
TEST(NcclCostTies, AnExcludedDefaultsStandInBreaksTiesInNcclsOrder) {
  const FakeModel model = parsed_model(R"(schema: nccltune/fake-model/v1
default: [{algo: Ring, proto: LL}]
algos:
  Ring: {LL: {lat_us: 5, busbw_gbps: 40}, Simple: {lat_us: 20, busbw_gbps: 300}}
  Tree: {LL: {lat_us: 6, busbw_gbps: 30}, Simple: {lat_us: 20, busbw_gbps: 300}}
)");
  const CommModel comm = trust_comm(model, {{"NCCL_PROTO", "Simple"}}, 1);
  ASSERT_EQ(comm.allowed.size(), 2u);
  EXPECT_DOUBLE_EQ(pair_time_us(model, comm, {"Ring", "Simple"}, "all_reduce", 1 << 20),
                   pair_time_us(model, comm, {"Tree", "Simple"}, "all_reduce", 1 << 20));
  EXPECT_EQ(choose_algo_proto(model, comm, "all_reduce", 1 << 20), (AlgoProto{"Tree", "Simple"}));
}

// F38: before 2.24.3 parseList splits NCCL_ALGO / NCCL_PROTO at commas only and ignores names it
// does not know: a scoped value is one unknown name (or a few), and a function NCCL_ALGO leaves
// no algorithm gets Ring back (ringbdw).
TEST(NcclScopedLists, BeforeTwoTwentyFourThreeAScopedListIsOneUnknownName) {
  FakeModel model = parsed_model(trust_model());
  const NcclEnv scoped{{"NCCL_ALGO", "allreduce:tree;allgather:ring"}};
  const CommModel now = trust_comm(model, scoped, 2);
  EXPECT_TRUE(allows_pair(now, "Tree", "Simple"));
  EXPECT_FALSE(allows_pair(now, "Ring", "Simple"));

  model.nccl_version = 22304;
  const std::optional<NameFilter> filter = name_filter(scoped, "NCCL_ALGO", "all_reduce", model.nccl_version);
  ASSERT_TRUE(filter.has_value());
  EXPECT_EQ(filter->names, std::vector<std::string>{"allreduce:tree;allgather:ring"});
  const CommModel old = trust_comm(model, scoped, 2);
  EXPECT_FALSE(allows_pair(old, "Tree", "Simple"));
  EXPECT_TRUE(allows_pair(old, "Ring", "Simple"));
  EXPECT_TRUE(allows_pair(old, "Ring", "LL"));
  // "allreduce:ring,tree": "tree" is a name of its own, for every function.
  const CommModel split = trust_comm(model, {{"NCCL_ALGO", "allreduce:ring,tree"}}, 2, "all_gather");
  EXPECT_TRUE(allows_pair(trust_comm(model, {{"NCCL_ALGO", "allreduce:ring,tree"}}, 2), "Tree", "Simple"));
  EXPECT_FALSE(allows_pair(trust_comm(model, {{"NCCL_ALGO", "allreduce:ring,tree"}}, 2), "Ring", "Simple"));
  // all_gather has no Tree: nothing left, so Ring comes back.
  EXPECT_TRUE(allows_pair(split, "Ring", "Simple"));
  // NCCL_PROTO still filters Ring's protocols, and one that leaves Ring nothing leaves no pair.
  const CommModel simple_only =
      trust_comm(model, {{"NCCL_ALGO", "allreduce:tree"}, {"NCCL_PROTO", "allreduce:ll;Simple"}}, 2);
  EXPECT_TRUE(simple_only.allowed.empty()) << "'allreduce:ll;Simple' is one unknown protocol name";
}

// F39: NCCL_COMM_SPLIT_SHARE_RESOURCES as NCCL reads it, and the channel cap.
TEST(NcclSplitShare, OneSharesAndTheChildIsCappedAtItsOwnersChannels) {
  EXPECT_FALSE(splits_share_resources({}));
  EXPECT_TRUE(splits_share_resources({{"NCCL_COMM_SPLIT_SHARE_RESOURCES", "1"}}));
  EXPECT_TRUE(splits_share_resources({{"NCCL_COMM_SPLIT_SHARE_RESOURCES", "0x1"}}));  // strtoll, base 0
  EXPECT_FALSE(splits_share_resources({{"NCCL_COMM_SPLIT_SHARE_RESOURCES", "0"}}));
  EXPECT_FALSE(splits_share_resources({{"NCCL_COMM_SPLIT_SHARE_RESOURCES", "2"}}));  // not 0/1: 0

  const FakeModel model =
      parsed_model(trust_model("channels: {default: 16, busbw_scale: {4: 0.5, 16: 1.0}}\n"));
  CommModel child = trust_comm(model, {}, 1);
  ASSERT_EQ(child.channels, 16);
  const double before = pair_time_us(model, child, {"Ring", "Simple"}, "all_reduce", 1 << 28);
  child.nvls_channels = 16;
  cap_to_shared_channels(child, model, {4, 0});
  EXPECT_EQ(child.channels, 4);
  EXPECT_DOUBLE_EQ(child.channel_scale, 0.5);
  EXPECT_EQ(child.nvls_channels, 16) << "a parent without NVLS support caps nothing";
  EXPECT_GT(pair_time_us(model, child, {"Ring", "Simple"}, "all_reduce", 1 << 28), before);
  cap_to_shared_channels(child, model, {32, 8});
  EXPECT_EQ(child.channels, 4) << "never raised";
  EXPECT_EQ(child.nvls_channels, 8);

  Result<FakeModel> costs =
      parse_fake_model(trust_model("init_cost_ms: {nccl_comm: 9, nccl_split: 5}\n"), "m");
  ASSERT_TRUE(costs.ok()) << costs.error();
  EXPECT_EQ(costs->init_cost.shared_split_ms(), 5);
  costs = parse_fake_model(trust_model("init_cost_ms: {nccl_split: 5, nccl_split_shared: 3}\n"), "m");
  ASSERT_TRUE(costs.ok()) << costs.error();
  EXPECT_EQ(costs->init_cost.shared_split_ms(), 3);
  EXPECT_EQ(costs->init_cost.split_ms(), 5);
}

}  // namespace
}  // namespace nccltune::fake

namespace {
namespace split_share_test {

using namespace nccltune;
using namespace nccltune::fake_world;

// The "<n> coll channels" of the INFO lines in `log`, in order.
std::vector<int> coll_channels(const std::string& log) {
  std::vector<int> counts;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    const auto at = line.find(" coll channels,");
    if (at == std::string::npos) continue;
    const auto start = line.rfind(' ', at - 1) + 1;
    counts.push_back(std::stoi(line.substr(start, at - start)));
  }
  return counts;
}

}  // namespace split_share_test
}  // namespace

// F39 end to end: 4 ranks on 2 emulated nodes run 4 channels (the 2-node entry); each node's
// split would run 16 (the top level), but with NCCL_COMM_SPLIT_SHARE_RESOURCES=1 it is capped at
// its parent's 4, and it pays `nccl_split_shared`.
TEST(NcclSplitShare, ASharingSplitRunsOnItsParentsChannels) {
  const nccltune::test_support::TempDir dir("nccltune-split-share");
  const std::string path = (dir.path() / "model.yaml").string();
  nccltune::test_support::write_file(
      path, nccltune::fake::trust_model("channels: {default: 16}\n"
                                        "init_cost_ms: {nccl_split: 0, nccl_split_shared: 200}\n"
                                        "nodes: [{min_nodes: 2, channels: {default: 4}}]\n"));
  for (const bool share : {false, true}) {
    SCOPED_TRACE(share ? "shared" : "not shared");
    const nccltune::test_support::TempDir logs("nccltune-split-share-logs");
    nccltune::fake_world::Env env{
        {"NCCLTUNE_FAKE_MODEL", path},   {"NCCLTUNE_FAKE_TIMEOUT_S", "20"},
        {"NCCLTUNE_EMULATE_NODES", "2"}, {"NCCL_DEBUG", "INFO"},
        {"NCCL_DEBUG_SUBSYS", "INIT"},   {"NCCL_DEBUG_FILE", (logs.path() / "nccl.%p.log").string()}};
    if (share) env.emplace_back("NCCL_COMM_SPLIT_SHARE_RESOURCES", "1");
    const nccltune::fake_world::Body body = [](nccltune::fake_world::World& w) {
      nccltune::Result<nccltune::NcclComm> world = w.init();
      if (!world) {
        w.report << "init-error " << world.error() << "\n";
        return;
      }
      const auto start = std::chrono::steady_clock::now();
      nccltune::Result<std::optional<nccltune::NcclComm>> node = w.nccl.split(*world, w.rank / 2, w.rank);
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      w.report << (node && node->has_value() ? "split " : "split-error ") << ms.count() << "\n";
    };
    const nccltune::fake_world::Outcome out = nccltune::fake_world::run_world(4, env, body);
    for (int r = 0; r < 4; ++r) {
      const std::string& report = out.reports[static_cast<std::size_t>(r)];
      ASSERT_EQ(report.rfind("split ", 0), 0u) << report;
      if (share) {
        EXPECT_GE(std::stol(report.substr(6)), 200) << report;  // a lower bound only
      }
    }
    std::string all_logs;
    for (const auto& file : std::filesystem::directory_iterator(logs.path()))
      all_logs += nccltune::test_support::read_file(file.path());
    const std::vector<int> counts = split_share_test::coll_channels(all_logs);
    // Every rank prints the line: 4 for the world's ranks, then each split's own.
    EXPECT_EQ(std::count(counts.begin(), counts.end(), 4), share ? 8 : 4) << all_logs;
    EXPECT_EQ(std::count(counts.begin(), counts.end(), 16), share ? 0 : 4) << all_logs;
  }
}
