// The fake NCCL's INFO lines (tests/fake-gpu/nccl_debug.h): NCCL_DEBUG, NCCL_DEBUG_SUBSYS and
// NCCL_DEBUG_FILE read as NCCL reads them, and lines that nccltune's own NCCL log reader
// (collectives/nccl_info_log.h) reads back as the facts the model's nccl_log section states.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "comm_model.h"
#include "fake_model.h"
#include "nccl_debug.h"

using namespace nccltune;
using namespace nccltune::fake;

namespace {

constexpr const char* kLogModel = R"(schema: nccltune/fake-model/v1
default: [{algo: Ring, proto: Simple}]
channels: {default: 4}
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, Simple: {lat_us: 28, busbw_gbps: 360}}
  NVLS: {Simple: {lat_us: 24, busbw_gbps: 470}}
)";

FakeModel model_with_log(const std::string& nccl_log) {
  Result<FakeModel> model = parse_fake_model(std::string(kLogModel) + nccl_log, "model.yaml");
  EXPECT_TRUE(model) << (model ? "" : model.error());
  return model ? *model : FakeModel{};
}

// Every rank's init lines as one log, each line in NCCL's prefix form.
std::string job_log(const FakeModel& model, const NcclEnv& env, int nranks, const char* emulate_nodes) {
  std::string text;
  for (int rank = 0; rank < nranks; ++rank) {
    Result<CommModel> comm = resolve_comm_model(model, env, rank, nranks);
    EXPECT_TRUE(comm);
    std::vector<std::string> hosts;
    for (int r = 0; r < nranks; ++r)
      hosts.push_back(process_host("node.example.com", emulate_nodes, r, nranks));
    const RankPlace place = place_in_comm(hosts, rank);
    for (const LogLine& line : init_lines(model, env, *comm, place))
      text +=
          place.host + ":100:101 [" + std::to_string(place.local_rank) + "] NCCL INFO " + line.message + "\n";
  }
  return text;
}

}  // namespace

TEST(FakeNcclDebug, SettingsAsNcclReadsThem) {
  EXPECT_FALSE(debug_settings({}).info);
  EXPECT_FALSE(debug_settings({{"NCCL_DEBUG", "WARN"}}).info);
  EXPECT_TRUE(debug_settings({{"NCCL_DEBUG", "info"}}).info);
  EXPECT_TRUE(debug_settings({{"NCCL_DEBUG", "TRACE"}}).info);
  EXPECT_EQ(debug_settings({}).subsystems, kSubsysInit | kSubsysBootstrap | kSubsysEnv) << "NCCL's default";
  EXPECT_EQ(debug_settings({{"NCCL_DEBUG_SUBSYS", "INIT,tuning,NOSUCH"}}).subsystems,
            kSubsysInit | kSubsysTuning);
  EXPECT_EQ(debug_settings({{"NCCL_DEBUG_SUBSYS", "^NET"}}).subsystems, ~std::uint32_t{kSubsysNet});
  EXPECT_EQ(debug_settings({{"NCCL_DEBUG_SUBSYS", "ALL"}}).subsystems, std::uint32_t{kSubsysAll});
  EXPECT_EQ(debug_settings({{"NCCL_DEBUG_FILE", "/tmp/x.%h"}}).file, "/tmp/x.%h");
}

TEST(FakeNcclDebug, FileNameExpandsHostAndPid) {
  EXPECT_EQ(debug_file_name("/logs/nccl.%h.%p.log", "node01", 4242), "/logs/nccl.node01.4242.log");
  EXPECT_EQ(debug_file_name("100%%-%x-%", "h", 1), "100%-%x-%");
}

TEST(FakeNcclDebug, EmulatedNodesAreHostsOfTheirOwn) {
  const auto place = [](const char* emulate, int rank, int nranks) {
    std::vector<std::string> hosts;
    for (int r = 0; r < nranks; ++r) hosts.push_back(process_host("gpu7.cluster.local", emulate, r, nranks));
    return place_in_comm(hosts, rank);
  };
  const RankPlace one = place(nullptr, 3, 4);
  EXPECT_EQ(one.host, "gpu7");
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.local_ranks, 4);
  EXPECT_EQ(one.local_rank, 3);
  const RankPlace two = place("2", 3, 4);
  EXPECT_EQ(two.host, "gpu7-node1");
  EXPECT_EQ(two.nodes, 2);
  EXPECT_EQ(two.local_ranks, 2);
  EXPECT_EQ(two.local_rank, 1);
  EXPECT_EQ(place("3", 3, 4).nodes, 1) << "3 does not divide 4 ranks";
  EXPECT_EQ(place("x", 0, 4).nodes, 1);
}

TEST(FakeNcclDebug, TuningLineIsNcclsFormat) {
  EXPECT_EQ(tuning_message("AllReduce", 1048576, {"Ring", "LL128"}, 32),
            "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..31}");
  EXPECT_EQ(tuning_message("AllGather", 8, {"NVLSTree", "Simple"}, 1),
            "AllGather: 8 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..0}");
  const NcclInfoLog log = parse_nccl_info_log(
      "h:1:2 [0] NCCL INFO " + tuning_message("ReduceScatter", 4096, {"Tree", "LL"}, 2) + "\n", "log");
  ASSERT_EQ(log.choices.size(), 1u);
  EXPECT_EQ(log.choices[0].op, "ReduceScatter");
  EXPECT_EQ(log.choices[0].bytes, 4096);
  EXPECT_EQ(log.choices[0].algo, "TREE");
  EXPECT_EQ(log.choices[0].proto, "LL");
}

TEST(FakeNcclDebug, ModelSectionIsStrict) {
  EXPECT_FALSE(parse_fake_model(std::string(kLogModel) + "nccl_log: {transport: Ethernet}\n", "m.yaml"));
  EXPECT_FALSE(parse_fake_model(std::string(kLogModel) + "nccl_log: {devices: []}\n", "m.yaml"));
  EXPECT_FALSE(
      parse_fake_model(std::string(kLogModel) + "nccl_log: {devices: [\"mlx5_0; rm\"]}\n", "m.yaml"));
  const auto unknown = parse_fake_model(std::string(kLogModel) + "nccl_log: {gdrr: true}\n", "m.yaml");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("m.yaml:7: nccl_log: unknown key 'gdrr'"), std::string::npos)
      << unknown.error();
  const FakeModel plain = model_with_log("");
  EXPECT_EQ(plain.nccl_log.transport, NcclTransport::ib);
  EXPECT_EQ(plain.nccl_log.devices, std::vector<std::string>{"mlx5_0"});
  EXPECT_TRUE(plain.nccl_log.gdr);
  EXPECT_FALSE(plain.nccl_log.nvls.has_value()) << "unset: the model's algos decide";
}

TEST(FakeNcclDebug, TheLogReaderSeesWhatTheModelStates) {
  const FakeModel ib =
      model_with_log("nccl_log: {transport: IB, devices: [mlx5_0, mlx5_1], gdr: true, nvls: true}\n");
  NcclInfoLog log = parse_nccl_info_log(job_log(ib, {{"NCCL_PROTO", "Simple"}}, 4, "2"), "job.log");
  EXPECT_EQ(log.nccl_version, "2.28.9");
  EXPECT_EQ(log.ranks, 4);
  EXPECT_EQ(log.nodes, 2);
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"node-node0", "node-node1"}));
  EXPECT_EQ(log.transport, "IB");
  ASSERT_EQ(log.devices.size(), 2u);
  EXPECT_EQ(log.devices[1].name, "mlx5_1");
  EXPECT_EQ(log.devices[1].link_layer, "IB");
  EXPECT_EQ(log.net_connections, 2 * 4) << "each node's last rank, once per channel";
  EXPECT_EQ(log.gdr_connections, log.net_connections);
  EXPECT_EQ(log.nvls_available, true);
  EXPECT_EQ(log.nvls_channels, 16) << "NVLS's own 16 on SM 9.0 (ncclNvlsInit), not the coll channels";
  EXPECT_EQ(log.coll_channels, 4);
  EXPECT_EQ(log.env.at("NCCL_PROTO"), "Simple");

  const FakeModel roce = model_with_log("nccl_log: {transport: RoCE, devices: [mlx5_2], gdr: false, nvls: false}\n");
  log = parse_nccl_info_log(job_log(roce, {}, 4, "2"), "job.log");
  EXPECT_EQ(log.transport, "RoCE");
  EXPECT_GT(log.net_connections, 0);
  EXPECT_EQ(log.gdr_connections, 0);
  EXPECT_EQ(log.nvls_available, false);

  const FakeModel sockets = model_with_log("nccl_log: {transport: Socket, devices: [eth0]}\n");
  log = parse_nccl_info_log(job_log(sockets, {}, 2, "2"), "job.log");
  EXPECT_EQ(log.transport, "Socket");
  EXPECT_EQ(log.gdr_connections, 0) << "sockets never say GDRDMA";
  EXPECT_FALSE(log.ib_devices_listed);
}

TEST(FakeNcclDebug, TuningTableIsNcclsFormatAndReadsBack) {
  // ncclTopoTuneModel's table (src/graph/tuning.cc, 2.28.9) for a communicator of 4 ranks, with
  // NCCL_PROTO leaving LL out: its cells keep their latency and lose their bandwidth.
  const FakeModel model = model_with_log("");
  const NcclEnv env{{"NCCL_PROTO", "^LL"}};
  std::vector<CommModel> comms;
  std::vector<TuningTableRow> rows;
  const std::pair<const char*, const char*> functions[] = {{"Broadcast", "broadcast"},
                                                           {"Reduce", "reduce"},
                                                           {"AllGather", "all_gather"},
                                                           {"ReduceScatter", "reduce_scatter"},
                                                           {"AllReduce", "all_reduce"}};
  comms.reserve(std::size(functions));
  for (const auto& [function, op] : functions) {
    Result<CommModel> comm = resolve_comm_model(model, env, 0, 4, op);
    ASSERT_TRUE(comm) << comm.error();
    comms.push_back(*comm);
    rows.push_back({function, op, &model, &comms.back()});
  }
  const std::vector<std::string> lines = tuning_table_lines(rows);
  ASSERT_EQ(lines.size(), 3u * (3 + 5));  // three blocks: Algorithm, Protocol, NThreads, 5 functions
  EXPECT_EQ(lines[0],
            "  Algorithm   |                            Tree                  |                            Ring  "
            "                |                   CollNetDirect                  |");
  EXPECT_EQ(lines[1].substr(0, 49), "  Protocol    |             LL |          LL128 |");
  // AllReduce on 4 ranks: busbw / 2(n-1)/n = algbw; Ring LL excluded by NCCL_PROTO; Tree never modelled.
  EXPECT_EQ(lines[7],
            "    AllReduce |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.0/   0.0 |     0.0/   0.0 |"
            "    28.0/ 240.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |");
  EXPECT_EQ(lines[16], "  Algorithm   |                             PAT                  |");
  EXPECT_EQ(std::count(lines[17].begin(), lines[17].end(), '|'), 10) << "nine protocols even in PAT's block";

  std::string text;
  for (const std::string& line : lines) text += "h:1:2 [0] NCCL INFO " + line + "\n";
  const NcclInfoLog log = parse_nccl_info_log("h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 1 localRanks 4 "
                                              "localRank 0 MNNVL 0\n" + text,
                                              "rank0.log");
  ASSERT_EQ(log.model_tables.size(), 1u);
  int nvls_all_reduce = 0;
  for (const NcclModelCell& cell : log.model_tables[0].cells)
    if (cell.op == "AllReduce" && cell.algo == "NVLS" && cell.proto == "SIMPLE") {
      ++nvls_all_reduce;
      EXPECT_DOUBLE_EQ(cell.latency_us, 24.0);
      EXPECT_NEAR(cell.algbw, 470.0 * 4 / 6, 0.05);
    }
  EXPECT_EQ(nvls_all_reduce, 1);
}
