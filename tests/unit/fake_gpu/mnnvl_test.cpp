// Multi-node NVLink in the fake NCCL (tests/fake-gpu/FIDELITY.md F18, F24-F27): the model's
// `mnnvl` key, NCCL's rule for checking MNNVL, the NVLink domain as NCCL's node, the INFO lines
// NCCL prints for it and what nccltune's log reader makes of them, and what NCCL keys by the node
// count (NVLS, NVLSTree, `nodes` entries, slow_node's path, the tuner plugin's init).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "comm_model.h"
#include "fake_model.h"
#include "fake_model_errors.h"
#include "fake_world.h"
#include "mnnvl_domains.h"
#include "nccl_debug.h"
#include "test_files.h"

using namespace nccltune;
using namespace nccltune::fake;
using nccltune::test_support::fake_model_error;
using nccltune::test_support::read_file;
using nccltune::test_support::TempDir;
using nccltune::test_support::write_file;

namespace {
namespace mnnvl_test {

using namespace fake_world;

constexpr const char* kTrayModel = "models/gb200-nvl72-tray-model.yaml";

// The tray model with `hosts_per_domain` hosts in each NVLink domain, written to `dir`.
std::string tray_model(const TempDir& dir, int hosts_per_domain, const std::string& more = "") {
  std::string text = read_file(test_support::fixture(kTrayModel));
  const std::string key = "hosts_per_domain: 4";
  text.replace(text.find(key), key.size(), "hosts_per_domain: " + std::to_string(hosts_per_domain));
  const std::string path = (dir.path() / "model.yaml").string();
  write_file(path, text + more);
  return path;
}

// Each emulated host's ranks: `hosts` hosts of `per_host` ranks, in launcher order.
std::vector<std::string> hosts_of(int hosts, int per_host) {
  std::vector<std::string> out;
  for (int h = 0; h < hosts; ++h)
    for (int r = 0; r < per_host; ++r) out.push_back("gb-node" + std::to_string(h));
  return out;
}

std::vector<int> indexes(const std::vector<std::string>& hosts) {
  return emulated_node_indexes(hosts, /*emulated=*/true);
}

// An all_reduce of `bytes` float32 elements' worth on `comm`; "ok" or the error.
std::string all_reduce(const World& w, const NcclComm& comm, std::size_t bytes) {
  Result<DeviceBuffer> send = w.cuda.allocate(bytes);
  Result<DeviceBuffer> receive = w.cuda.allocate(bytes);
  if (!send || !receive) return "error allocate";
  const NcclApi& api = w.nccl.api();
  Status done = w.nccl.check(api.ncclAllReduce(send->data(), receive->data(), bytes / 4, nccl_abi::ncclFloat32,
                                               nccl_abi::ncclSum, comm.get(), w.stream.get()),
                             "ncclAllReduce");
  if (!done) return "error " + done.error();
  return w.cuda.synchronize(w.stream) ? "ok" : "error synchronize";
}

// The world of `hosts` emulated hosts x `per_host` ranks on `model`, each rank's INFO lines in
// `logs` (INIT and TUNING), each running one all_reduce of 64 MB.
Outcome run_job(const std::string& model, int hosts, int per_host, const TempDir& logs, const Env& more = {}) {
  Env env = {{"NCCLTUNE_FAKE_MODEL", model},
             {"NCCLTUNE_FAKE_TIMEOUT_S", "30"},
             {"NCCLTUNE_EMULATE_NODES", std::to_string(hosts)},
             {"NCCL_DEBUG", "INFO"},
             {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
             {"NCCL_DEBUG_FILE", (logs.path() / "nccl.%h.%p.log").string()}};
  env.insert(env.end(), more.begin(), more.end());
  const Body body = [](World& w) {
    Result<NcclComm> world = w.init();
    if (!world) {
      w.report << "init-error " << world.error() << "\n";
      return;
    }
    w.report << all_reduce(w, *world, 64 << 20) << "\n";
  };
  return run_world(hosts * per_host, env, body, 90, per_host);
}

void expect_clean(const Outcome& out) {
  for (std::size_t r = 0; r < out.statuses.size(); ++r) {
    EXPECT_TRUE(exited_cleanly(out.statuses[r])) << "rank " << r;
    EXPECT_EQ(out.reports[r], "ok\n") << "rank " << r;
  }
}

}  // namespace mnnvl_test
}  // namespace

// `mnnvl: {hosts_per_domain, health_mask, imex}`, read as strictly as the rest of the model.
TEST(FakeMnnvl, ModelKeyIsReadStrictly) {
  const std::string base = "schema: nccltune/fake-model/v1\nalgos: {Ring: {Simple: {lat_us: 1, busbw_gbps: 10}}}\n";
  Result<FakeModel> model =
      parse_fake_model(base + "mnnvl: {hosts_per_domain: 18, health_mask: \"0x1a9\", imex: false}\n", "m.yaml");
  ASSERT_TRUE(model.ok()) << model.error();
  ASSERT_TRUE(model->mnnvl.has_value());
  EXPECT_EQ(model->mnnvl->hosts_per_domain, 18);
  EXPECT_EQ(model->mnnvl->health_mask, 0x1a9u);
  EXPECT_FALSE(model->mnnvl->imex);
  Result<FakeModel> plain = parse_fake_model(base, "m.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->mnnvl.has_value()) << "no key, no fabric";
  Result<FakeModel> healthy = parse_fake_model(base + "mnnvl: {hosts_per_domain: 1}\n", "m.yaml");
  ASSERT_TRUE(healthy.ok());
  EXPECT_EQ(healthy->mnnvl->health_mask, 0x1aau);
  EXPECT_TRUE(healthy->mnnvl->imex);

  EXPECT_EQ(fake_model_error(base + "mnnvl: {hosts_per_domain: 0}\n"),
            "model.yaml:3: mnnvl.hosts_per_domain: 0 is outside 1..1073741824");
  EXPECT_EQ(fake_model_error(base + "mnnvl: {}\n"), "model.yaml:3: mnnvl.hosts_per_domain: missing");
  EXPECT_EQ(fake_model_error(base + "mnnvl: {hosts_per_domain: 4, domains: 2}\n"),
            "model.yaml:3: mnnvl: unknown key 'domains'");
  EXPECT_EQ(fake_model_error(base + "mnnvl: {hosts_per_domain: 4, health_mask: 426}\n"),
            "model.yaml:3: mnnvl.health_mask: '426' is not a hexadecimal mask (0x0 to 0xffffffff)");
  EXPECT_EQ(fake_model_error(base + "mnnvl: 4\n").find("model.yaml:3: mnnvl:"), 0u);
}

// init.cc:914 (v2.28.9) / :1072 (v2.30.7): checked on several hosts unless NCCL_MNNVL_ENABLE is 0
// or P2P is disabled; always when it is 1. ncclGetLevel reads NCCL_P2P_DISABLE=1 and
// NCCL_P2P_LEVEL=LOC (or 0) as disabled.
TEST(FakeMnnvl, NcclChecksMnnvlAsItsEnableRuleSays) {
  EXPECT_TRUE(mnnvl_checked({}, true));
  EXPECT_FALSE(mnnvl_checked({}, false)) << "one host: not checked";
  EXPECT_TRUE(mnnvl_checked({{"NCCL_MNNVL_ENABLE", "2"}}, true));
  EXPECT_TRUE(mnnvl_checked({{"NCCL_MNNVL_ENABLE", "5"}}, true)) << "any value but 0 and 1 is auto";
  EXPECT_FALSE(mnnvl_checked({{"NCCL_MNNVL_ENABLE", "0"}}, true));
  EXPECT_TRUE(mnnvl_checked({{"NCCL_MNNVL_ENABLE", "1"}}, false)) << "1: even on one host";
  EXPECT_FALSE(mnnvl_checked({{"NCCL_P2P_DISABLE", "1"}}, true));
  EXPECT_TRUE(mnnvl_checked({{"NCCL_P2P_DISABLE", "2"}}, true)) << "only 1 disables";
  EXPECT_TRUE(mnnvl_checked({{"NCCL_P2P_DISABLE", "1"}, {"NCCL_MNNVL_ENABLE", "1"}}, true));
  EXPECT_FALSE(mnnvl_checked({{"NCCL_P2P_LEVEL", "LOC"}}, true));
  EXPECT_FALSE(mnnvl_checked({{"NCCL_P2P_LEVEL", "0"}}, true));
  EXPECT_TRUE(mnnvl_checked({{"NCCL_P2P_LEVEL", "loc"}}, true)) << "path names compare case-sensitively";
  EXPECT_TRUE(mnnvl_checked({{"NCCL_P2P_LEVEL", "NVL"}}, true));
}

// topo.cc:1493-1498 (v2.28.9) / :1887-1892 (v2.30.7): under MNNVL the clique's ranks are the local
// ranks; init.cc:1095-1109 / :1285-1300: nNodes counts the rings' first ranks, one per clique.
TEST(FakeMnnvl, ADomainIsOneNodeOfItsRanks) {
  const MnnvlModel four{4, 0x1aa, true};
  const MnnvlModel two{2, 0x1aa, true};
  const std::vector<std::string> world = mnnvl_test::hosts_of(4, 4);
  const std::vector<int> index = mnnvl_test::indexes(world);

  const NcclNodeKeys one_domain = nccl_node_keys(world, index, 5, four, {});
  EXPECT_TRUE(one_domain.mnnvl.enabled);
  EXPECT_EQ(one_domain.mnnvl.clique_size, 16);
  EXPECT_EQ(one_domain.mnnvl.clique_rank, 5);
  RankPlace place = place_in_comm(world, one_domain.node_of_rank, 5);
  EXPECT_EQ(place.nodes, 1);
  EXPECT_EQ(place.local_ranks, 16);
  EXPECT_EQ(place.local_rank, 5);
  EXPECT_EQ(place.host, "gb-node1");
  EXPECT_EQ(place.device, 1) << "the CUDA device stays the host's";
  CommNodes nodes = comm_nodes(world, one_domain.node_of_rank, 5, true);
  EXPECT_EQ(nodes.count, 1);
  EXPECT_EQ(nodes.local_ranks, 16);
  EXPECT_EQ(nodes.fewest_local_ranks, 16);
  EXPECT_EQ(nodes.node, 1) << "faults keep naming hosts";
  EXPECT_EQ(nodes.present, (std::vector<int>{0, 1, 2, 3}));

  // NCCL_MNNVL_ENABLE=0, P2P disabled, or no fabric: hosts.
  for (const NcclEnv& env : {NcclEnv{{"NCCL_MNNVL_ENABLE", "0"}}, NcclEnv{{"NCCL_P2P_DISABLE", "1"}}}) {
    const NcclNodeKeys off = nccl_node_keys(world, index, 5, four, env);
    EXPECT_FALSE(off.mnnvl.enabled);
    EXPECT_TRUE(off.mnnvl.fabric) << "fillInfo's line is printed whatever the rule says";
    EXPECT_EQ(place_in_comm(world, off.node_of_rank, 5).nodes, 4);
    EXPECT_EQ(place_in_comm(world, off.node_of_rank, 5).local_ranks, 4);
  }
  const NcclNodeKeys no_fabric = nccl_node_keys(world, index, 5, std::nullopt, {{"NCCL_MNNVL_ENABLE", "1"}});
  EXPECT_FALSE(no_fabric.mnnvl.enabled);
  EXPECT_FALSE(no_fabric.mnnvl.fabric);
  EXPECT_EQ(place_in_comm(world, no_fabric.node_of_rank, 5).nodes, 4);

  // Two domains of two hosts: two nodes of 8.
  const NcclNodeKeys two_domains = nccl_node_keys(world, index, 9, two, {});
  EXPECT_TRUE(two_domains.mnnvl.enabled);
  EXPECT_EQ(two_domains.mnnvl.domain, 1);
  EXPECT_EQ(two_domains.mnnvl.clique_size, 8);
  EXPECT_EQ(two_domains.mnnvl.clique_rank, 1);
  place = place_in_comm(world, two_domains.node_of_rank, 9);
  EXPECT_EQ(place.nodes, 2);
  EXPECT_EQ(place.node, 1);
  EXPECT_EQ(place.local_ranks, 8);

  // A rail (one rank per host) of one domain: 1 node of 4, MNNVL on. Of two domains: 2 nodes of 2.
  const std::vector<std::string> rail = {"gb-node0", "gb-node1", "gb-node2", "gb-node3"};
  const NcclNodeKeys rail_one = nccl_node_keys(rail, mnnvl_test::indexes(rail), 2, four, {});
  EXPECT_TRUE(rail_one.mnnvl.enabled);
  EXPECT_EQ(place_in_comm(rail, rail_one.node_of_rank, 2).nodes, 1);
  EXPECT_EQ(place_in_comm(rail, rail_one.node_of_rank, 2).local_ranks, 4);
  const NcclNodeKeys rail_two = nccl_node_keys(rail, mnnvl_test::indexes(rail), 2, two, {});
  EXPECT_EQ(place_in_comm(rail, rail_two.node_of_rank, 2).nodes, 2);
  EXPECT_EQ(place_in_comm(rail, rail_two.node_of_rank, 2).local_ranks, 2);
  // A rail of one rank per domain: every clique of 1, MNNVL off (nothing to fuse), nodes by host.
  const NcclNodeKeys rail_apart = nccl_node_keys(rail, mnnvl_test::indexes(rail), 2, MnnvlModel{1, 0x1aa, true}, {});
  EXPECT_FALSE(rail_apart.mnnvl.enabled);
  EXPECT_EQ(place_in_comm(rail, rail_apart.node_of_rank, 2).nodes, 4);

  // A node's communicator: one host, not checked, MNNVL 0; NCCL_MNNVL_ENABLE=1 checks it and the
  // host's ranks form a clique.
  const std::vector<std::string> host = {"gb-node2", "gb-node2", "gb-node2", "gb-node2"};
  EXPECT_FALSE(nccl_node_keys(host, mnnvl_test::indexes(host), 1, four, {}).mnnvl.enabled);
  const NcclNodeKeys forced = nccl_node_keys(host, mnnvl_test::indexes(host), 1, four, {{"NCCL_MNNVL_ENABLE", "1"}});
  EXPECT_TRUE(forced.mnnvl.enabled);
  EXPECT_EQ(forced.mnnvl.clique_size, 4);
  EXPECT_EQ(place_in_comm(host, forced.node_of_rank, 1).nodes, 1);

  EXPECT_EQ(domain_layout_problem(four, "m.yaml", 8), "");
  EXPECT_EQ(domain_layout_problem(MnnvlModel{3, 0x1aa, true}, "m.yaml", 4),
            "m.yaml: mnnvl.hosts_per_domain 3 does not divide the 4 emulated hosts (NCCLTUNE_EMULATE_NODES): "
            "every NVLink domain must be whole");
  EXPECT_NE(fabric_uuid(0), fabric_uuid(1));
}

// mnnvl.cc:87-88 (v2.28.9) / :96-97 (v2.30.7): " nvlDomainSize %d" from 2.30.3 on; fillInfo's
// fabric line carries the model's health mask and the device's busId (init.cc:669-672 / :775-776).
TEST(FakeMnnvl, TheMnnvlLinesFollowNcclsVersionAndTheModel) {
  Result<FakeModel> model = load_fake_model(test_support::fixture(mnnvl_test::kTrayModel).string());
  ASSERT_TRUE(model.ok()) << model.error();
  model->mnnvl->health_mask = 0x1a9;
  CommModel comm;
  comm.rank = 6;
  comm.nranks = 16;
  RankPlace place;
  place.host = "gb-node1";
  place.local_ranks = 16;
  place.local_rank = 6;
  place.device = 2;
  const MnnvlPlace mnnvl{true, true, 0, 16, 6};
  const auto lines = [&](int version) {
    model->nccl_version = version;
    std::string text;
    for (const LogLine& line : init_lines(*model, {}, comm, place, mnnvl)) text += line.message + "\n";
    return text;
  };
  const std::string old = lines(22809);
  EXPECT_NE(old.find("\nMNNVL busId 0x1801000 fabric UUID 4e564c3732000001.6661627269630000 cliqueId 0x7fff state 3 "
                     "healthMask 0x1a9\n"),
            std::string::npos)
      << old;
  EXPECT_NE(old.find("\nMNNVL 1 cliqueId 7fff cliqueSize 16 cliqueRank 6\n"), std::string::npos) << old;
  EXPECT_NE(old.find("comm 0x7f0000000000 rank 6 nRanks 16 nNodes 1 localRanks 16 localRank 6 MNNVL 1\n"),
            std::string::npos)
      << old;
  EXPECT_NE(lines(23003).find("\nMNNVL 1 cliqueId 7fff cliqueSize 16 cliqueRank 6 nvlDomainSize 16\n"),
            std::string::npos);
  EXPECT_EQ(lines(22907).find("nvlDomainSize"), std::string::npos);
}

// What NCCL keys by its node count sees the domain: NVLS on one domain, NVLSTree across domains
// (F1), 24 NVLS channels on one SM 10.x node and 32 on several (F3), slow_node's path, `nodes`
// entries by min_nodes and ranks_per_node.
TEST(FakeMnnvl, WhatNcclKeysByNodeCountSeesTheDomain) {
  const TempDir dir("nccltune-mnnvl-keys");
  Result<FakeModel> model =
      load_fake_model(mnnvl_test::tray_model(dir, 4,
                                             "faults: [{fault: slow_node, node: 1, path: network, factor: 3}]\n"));
  ASSERT_TRUE(model.ok()) << model.error();
  const std::vector<std::string> world = mnnvl_test::hosts_of(4, 4);
  const auto resolve = [&](const NcclEnv& env) {
    const NcclNodeKeys keys = nccl_node_keys(world, mnnvl_test::indexes(world), 0, model->mnnvl, env);
    const CommNodes nodes = comm_nodes(world, keys.node_of_rank, 0, true);
    const FakeModel resolved = model_for_collective(
        model_for_nodes(*model, nodes.count, 16 / nodes.count), "all_reduce");
    Result<CommModel> comm = resolve_comm_model(resolved, env, 0, 16, "all_reduce", nodes);
    EXPECT_TRUE(comm.ok());
    return std::pair{resolved, comm.ok() ? *comm : CommModel{}};
  };
  const auto [one_model, one] = resolve({});
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.nvls_channels, 24);
  EXPECT_EQ(one.slow_factor, 1) << "inside one domain the path is local";
  EXPECT_EQ(choose_algo_proto(one_model, one, "all_reduce", 64 << 20), (AlgoProto{"NVLS", "Simple"}));
  const auto [four_model, four] = resolve({{"NCCL_MNNVL_ENABLE", "0"}});
  EXPECT_EQ(four.nodes, 4);
  EXPECT_EQ(four.nvls_channels, 32);
  EXPECT_EQ(four.slow_factor, 3);
  EXPECT_EQ(choose_algo_proto(four_model, four, "all_reduce", 64 << 20), (AlgoProto{"NVLSTree", "Simple"}))
      << "the `nodes` entry for 2+ nodes";
}

// enqueue.cc:1802 (v2.28.9) / :2004-2006 (v2.30.7): past NCCL_MAX_NVLS_ARITY (32) local ranks NVLS
// and NVLSTree run AllReduce only.
TEST(NcclEnables, NvlsRunsOnlyAllReducePast32LocalRanks) {
  Result<FakeModel> model = load_fake_model(test_support::fixture(mnnvl_test::kTrayModel).string());
  ASSERT_TRUE(model.ok()) << model.error();
  const auto allowed = [&](const char* op, int hosts, int per_host, const char* algo) {
    const std::vector<std::string> world = mnnvl_test::hosts_of(hosts, per_host);
    const NcclNodeKeys keys = nccl_node_keys(world, mnnvl_test::indexes(world), 0, MnnvlModel{hosts, 0x1aa, true}, {});
    const CommNodes nodes = comm_nodes(world, keys.node_of_rank, 0, true);
    Result<CommModel> comm = resolve_comm_model(*model, {}, 0, hosts * per_host, op, nodes);
    EXPECT_TRUE(comm.ok());
    return comm.ok() && std::find(comm->allowed.begin(), comm->allowed.end(), AlgoProto{algo, "Simple"}) !=
                            comm->allowed.end();
  };
  EXPECT_TRUE(allowed("all_gather", 8, 4, "NVLS")) << "32 local ranks";
  EXPECT_FALSE(allowed("all_gather", 9, 4, "NVLS")) << "36 local ranks";
  EXPECT_FALSE(allowed("reduce_scatter", 18, 4, "NVLS")) << "72 local ranks";
  EXPECT_TRUE(allowed("all_reduce", 18, 4, "NVLS")) << "AllReduce runs NVLS on 72";
  Result<CommModel> forced = resolve_comm_model(*model, {{"NCCL_ALGO", "NVLS"}}, 0, 72, "all_gather",
                                                CommNodes{0, {0}, 1, 72, 72});
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->allowed.empty());
  EXPECT_NE(forced->no_pair.find("NVLS and NVLSTree run AllReduce only past 32 local ranks"), std::string::npos)
      << forced->no_pair;
}

// 4 emulated hosts x 4 ranks in one domain: every rank prints fillInfo's fabric line, the MNNVL
// clique line and `nNodes 1 localRanks 16 ... MNNVL 1`; all_reduce of 64 MB runs NVLS (the
// model's fastest, NCCL's pick on one node); nccltune's log reader reads 1 node, MNNVL on.
TEST(FakeGpuMnnvl, FourHostsOfOneDomainAreOneNodeOfSixteen) {
  const TempDir logs("nccltune-mnnvl-logs");
  const mnnvl_test::Outcome out =
      mnnvl_test::run_job(test_support::fixture(mnnvl_test::kTrayModel).string(), 4, 4, logs);
  mnnvl_test::expect_clean(out);
  const std::string text = mnnvl_test::logs_in(logs.path());
  for (int r = 0; r < 16; ++r) {
    const std::string rank = std::to_string(r);
    EXPECT_EQ(mnnvl_test::occurrences(text, "comm 0x7f0000000000 rank " + rank + " nRanks 16 nNodes 1 localRanks 16 "
                                            "localRank " + rank + " MNNVL 1\n"),
              1u)
        << text;
    EXPECT_EQ(mnnvl_test::occurrences(text, "NCCL INFO MNNVL 1 cliqueId 7fff cliqueSize 16 cliqueRank " + rank + "\n"),
              1u);
  }
  EXPECT_EQ(mnnvl_test::occurrences(text, "NCCL INFO MNNVL busId 0x801000 fabric UUID 4e564c3732000001.6661627269630000 "
                                          "cliqueId 0x7fff state 3 healthMask 0x1aa\n"),
            4u)
      << "device 0 of each of the 4 hosts";
  EXPECT_EQ(mnnvl_test::occurrences(text, "MNNVL busId "), 16u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "NVLS multicast support is available on dev 3 (NVLS_NCHANNELS 24)"), 4u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "via NET/"), 0u) << "no network inside the node";
  EXPECT_EQ(mnnvl_test::occurrences(text, "AllReduce: 67108864 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..23}"),
            1u)
      << text;

  const NcclInfoLog read = parse_nccl_info_log(text, "nccl.log");
  EXPECT_EQ(read.nodes, 1);
  EXPECT_EQ(read.local_ranks, 16);
  EXPECT_EQ(read.ranks, 16);
  EXPECT_EQ(read.mnnvl, true);
  EXPECT_EQ(read.mnnvl_clique_size, 16);
  EXPECT_EQ(read.mnnvl_clique_ranks.size(), 16u);
  ASSERT_EQ(read.mnnvl_fabrics.size(), 1u) << "one fabric, alike on every rank";
  EXPECT_EQ(read.mnnvl_fabrics.front().lines, 16);
  EXPECT_EQ(read.mnnvl_fabrics.front().fabric_uuid, "4e564c3732000001.6661627269630000");
  EXPECT_EQ(read.mnnvl_fabrics.front().clique_id, 0x7fffu);
  EXPECT_EQ(read.mnnvl_fabrics.front().state, 3);
  EXPECT_EQ(read.mnnvl_fabrics.front().health_mask, 0x1aau);
  EXPECT_EQ(read.hosts.size(), 4u);
}

// NCCL_MNNVL_ENABLE=0: the same job is 4 nodes of 4 (MNNVL 0, no clique line; fillInfo's fabric
// line stays), NVLS is off and the `nodes` entry's NVLSTree runs all_reduce over the network.
TEST(FakeGpuMnnvl, MnnvlOffMakesHostsTheNodesAgain) {
  const TempDir logs("nccltune-mnnvl-off");
  const mnnvl_test::Outcome out = mnnvl_test::run_job(test_support::fixture(mnnvl_test::kTrayModel).string(), 4, 4,
                                                      logs, {{"NCCL_MNNVL_ENABLE", "0"}});
  mnnvl_test::expect_clean(out);
  const std::string text = mnnvl_test::logs_in(logs.path());
  EXPECT_EQ(mnnvl_test::occurrences(text, " nRanks 16 nNodes 4 localRanks 4 "), 16u) << text;
  EXPECT_EQ(mnnvl_test::occurrences(text, " MNNVL 0\n"), 16u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "cliqueSize"), 0u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "MNNVL busId "), 16u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "(NVLS_NCHANNELS 32)"), 16u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "AllReduce: 67108864 Bytes -> Algo NVLS_TREE proto SIMPLE"), 1u) << text;
  const NcclInfoLog read = parse_nccl_info_log(text, "nccl.log");
  EXPECT_EQ(read.nodes, 4);
  EXPECT_EQ(read.mnnvl, false);
}

// Two domains of two hosts (2 ranks each): 2 nodes of 4, MNNVL 1; NVLSTree runs, NVLS cannot
// (NCCL_ALGO=NVLS leaves all_reduce no pair: its call fails, as NCCL's does).
TEST(FakeGpuMnnvl, TwoDomainsAreTwoNodes) {
  const TempDir dir("nccltune-mnnvl-two");
  const TempDir logs("nccltune-mnnvl-two-logs");
  const std::string model = mnnvl_test::tray_model(dir, 2);
  const mnnvl_test::Outcome out = mnnvl_test::run_job(model, 4, 2, logs);
  mnnvl_test::expect_clean(out);
  const std::string text = mnnvl_test::logs_in(logs.path());
  EXPECT_EQ(mnnvl_test::occurrences(text, " nRanks 8 nNodes 2 localRanks 4 "), 8u) << text;
  EXPECT_EQ(mnnvl_test::occurrences(text, " MNNVL 1\n"), 8u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "fabric UUID 4e564c3732000001."), 4u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "fabric UUID 4e564c3732000002."), 4u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "AllReduce: 67108864 Bytes -> Algo NVLS_TREE proto SIMPLE"), 1u) << text;
  const TempDir forced_logs("nccltune-mnnvl-two-nvls");
  const mnnvl_test::Outcome forced = mnnvl_test::run_job(model, 4, 2, forced_logs, {{"NCCL_ALGO", "NVLS"}});
  for (const std::string& report : forced.reports) EXPECT_EQ(report.rfind("error ", 0), 0u) << report;
}

// Splits count their own domains: in one domain of 4 hosts, a rail (one rank per host) is 1 node
// of 4 with MNNVL 1, a host's communicator 1 node of 4 with MNNVL 0 (one host: not checked); the
// tuner plugin's init gets each one's nRanks and nNodes.
TEST(FakeGpuMnnvl, SplitsCountTheirOwnDomains) {
  const TempDir logs("nccltune-mnnvl-split");
  const mnnvl_test::Env env = {{"NCCLTUNE_FAKE_MODEL", test_support::fixture(mnnvl_test::kTrayModel).string()},
                               {"NCCLTUNE_FAKE_TIMEOUT_S", "30"},
                               {"NCCLTUNE_EMULATE_NODES", "4"},
                               {"NCCL_TUNER_PLUGIN", mnnvl_test::test_tuner()},
                               {"NCCL_DEBUG", "INFO"},
                               {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},
                               {"NCCL_DEBUG_FILE", (logs.path() / "nccl.%p.log").string()}};
  const mnnvl_test::Body body = [](mnnvl_test::World& w) {
    Result<NcclComm> world = w.init();
    if (!world) {
      w.report << "init-error\n";
      return;
    }
    Result<std::optional<NcclComm>> rail = w.nccl.split(*world, w.rank % 4, w.rank);
    Result<std::optional<NcclComm>> host = w.nccl.split(*world, w.rank / 4, w.rank);
    if (!rail || !host || !rail->has_value() || !host->has_value()) {
      w.report << "split-error\n";
      return;
    }
    w.report << mnnvl_test::gathered(w, **rail, w.rank) << " " << mnnvl_test::gathered(w, **host, w.rank) << "\n";
  };
  const mnnvl_test::Outcome out = mnnvl_test::run_world(16, env, body, 90, 4);
  for (int r = 0; r < 16; ++r) {
    const int lane = r % 4, first = r / 4 * 4;
    const std::string rail = std::to_string(lane) + "," + std::to_string(lane + 4) + "," +
                             std::to_string(lane + 8) + "," + std::to_string(lane + 12);
    const std::string host = std::to_string(first) + "," + std::to_string(first + 1) + "," +
                             std::to_string(first + 2) + "," + std::to_string(first + 3);
    EXPECT_TRUE(mnnvl_test::exited_cleanly(out.statuses[static_cast<std::size_t>(r)])) << "rank " << r;
    EXPECT_EQ(out.reports[static_cast<std::size_t>(r)], rail + " " + host + "\n") << "rank " << r;
  }
  const std::string text = mnnvl_test::logs_in(logs.path());
  EXPECT_EQ(mnnvl_test::occurrences(text, " nRanks 16 nNodes 1 localRanks 16 "), 16u) << text;
  EXPECT_EQ(mnnvl_test::occurrences(text, " nRanks 4 nNodes 1 localRanks 4 "), 32u);
  EXPECT_EQ(mnnvl_test::occurrences(text, " MNNVL 1\n"), 32u) << "the world's and the rails'";
  EXPECT_EQ(mnnvl_test::occurrences(text, " MNNVL 0\n"), 16u) << "the hosts'";
  EXPECT_EQ(mnnvl_test::occurrences(text, "cliqueSize 4 cliqueRank"), 16u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "TUNER/fake_test: init for 16 ranks on 1 nodes"), 16u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "TUNER/fake_test: init for 4 ranks on 1 nodes"), 32u);
}

// ncclMnnvlCheck (mnnvl.cc:15-30 at both tags): without a fabric it returns ncclSuccess and prints
// nothing, NCCL_MNNVL_ENABLE=1 or not: init succeeds with nodes by host and MNNVL 0.
TEST(FakeGpuMnnvl, EnableOneWithoutAFabricKeepsHostsAsNcclDoes) {
  const TempDir logs("nccltune-mnnvl-nofabric");
  const mnnvl_test::Outcome out = mnnvl_test::run_job(test_support::fixture("models/exact.yaml").string(), 2, 2,
                                                      logs, {{"NCCL_MNNVL_ENABLE", "1"}});
  mnnvl_test::expect_clean(out);
  const std::string text = mnnvl_test::logs_in(logs.path());
  EXPECT_EQ(mnnvl_test::occurrences(text, " nRanks 4 nNodes 2 localRanks 2 "), 4u) << text;
  EXPECT_EQ(mnnvl_test::occurrences(text, " MNNVL 0\n"), 4u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "MNNVL busId"), 0u);
  EXPECT_EQ(mnnvl_test::occurrences(text, "cliqueSize"), 0u);
}

// Domains that do not fill the emulated hosts are a mistake in the model: init fails on every rank
// with one line naming the file and mnnvl.hosts_per_domain. A domain whose IMEX cannot share fabric
// memory fails init with ncclMnnvlCheck's WARN (mnnvl.cc:67 at v2.28.9, :74-76 at v2.30.7).
TEST(FakeGpuMnnvl, BadDomainsAndBrokenImexFailInit) {
  const TempDir dir("nccltune-mnnvl-bad");
  const std::string model = mnnvl_test::tray_model(dir, 3);
  const std::string said = (dir.path() / "stderr").string();
  const mnnvl_test::Body body = [&said](mnnvl_test::World& w) {
    if (w.rank == 0) {  // rank 0's stderr to `said`, stderr's own buffering kept
      const int fd = open(said.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0 || dup2(fd, 2) < 0) w.report << "no stderr ";
      if (fd >= 0) close(fd);
    }
    Result<NcclComm> world = w.init();
    w.report << (world ? "ok" : "init-error") << "\n";
  };
  const mnnvl_test::Env env = {{"NCCLTUNE_FAKE_MODEL", model},
                               {"NCCLTUNE_FAKE_TIMEOUT_S", "30"},
                               {"NCCLTUNE_EMULATE_NODES", "4"}};
  const mnnvl_test::Outcome out = mnnvl_test::run_world(8, env, body, 90, 2);
  for (const std::string& report : out.reports) EXPECT_EQ(report, "init-error\n");
  EXPECT_EQ(read_file(said), "fakenccl: " + model +
                                 ": mnnvl.hosts_per_domain 3 does not divide the 4 emulated hosts "
                                 "(NCCLTUNE_EMULATE_NODES): every NVLink domain must be whole\n");

  const TempDir imex_dir("nccltune-mnnvl-imex");
  const TempDir logs("nccltune-mnnvl-imex-logs");
  const std::string broken = mnnvl_test::tray_model(imex_dir, 4);
  std::string text = read_file(broken);
  text.replace(text.find("{hosts_per_domain: 4}"), 21, "{hosts_per_domain: 4, imex: false}");
  write_file(broken, text);
  const mnnvl_test::Outcome failed = mnnvl_test::run_job(broken, 4, 1, logs);
  for (const std::string& report : failed.reports) EXPECT_EQ(report.rfind("init-error ", 0), 0u) << report;
  const std::string lines = mnnvl_test::logs_in(logs.path());
  EXPECT_EQ(mnnvl_test::occurrences(lines, "NCCL WARN MNNVL (cliqueSize 4) is available but not working on this "
                                           "system. Check the IMEX channel configuration "
                                           "(/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore "
                                           "this issue.\n"),
            4u)
      << lines;
  const mnnvl_test::Outcome bypassed = mnnvl_test::run_job(broken, 4, 1, logs, {{"NCCL_MNNVL_ENABLE", "0"}});
  mnnvl_test::expect_clean(bypassed);
}
