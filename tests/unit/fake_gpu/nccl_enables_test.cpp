// What NCCL enables, whatever a model says: each test pins a row of tests/fake-gpu/FIDELITY.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "comm_model.h"
#include "element_ops.h"
#include "fake_model.h"
#include "fake_model_errors.h"
#include "nccl_debug.h"
#include "nccl_env.h"

namespace nccltune::fake {
namespace {

using test_support::fake_model_error;

// An NVSwitch node's model: NVLS and NVLSTree are the hardware's fastest at large sizes.
constexpr const char* kNvlsModel = R"(schema: nccltune/fake-model/v1
devices: [{name: "NVIDIA H100 80GB HBM3", pci: "0000:18:00.0", sm: 90}]
default:
  - {max_bytes: 65536, algo: Ring, proto: LL}
  - {algo: NVLS, proto: Simple}
channels: {default: 16, busbw_scale: {4: 0.3, 8: 0.6, 16: 1.0, 24: 1.02, 32: 1.04}}
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  NVLS: {Simple: {lat_us: 24, busbw_gbps: 2000}}
  NVLSTree: {Simple: {lat_us: 26, busbw_gbps: 1800}}
)";

FakeModel parsed(const std::string& text) {
  Result<FakeModel> model = parse_fake_model(text, "model.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : FakeModel{};
}

CommNodes on_nodes(int count, int ranks_per_node) {
  CommNodes nodes;
  nodes.count = count;
  nodes.present.clear();
  for (int node = 0; node < count; ++node) nodes.present.push_back(node);
  nodes.fewest_local_ranks = ranks_per_node;
  return nodes;
}

CommModel comm_on(const FakeModel& model, const NcclEnv& env, int nodes, int ranks_per_node,
                  const char* op = "all_reduce") {
  Result<CommModel> comm = resolve_comm_model(model, env, 0, nodes * ranks_per_node, op, on_nodes(nodes, ranks_per_node));
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

bool allows(const CommModel& comm, const char* algo, const char* proto = "Simple") {
  return std::find(comm.allowed.begin(), comm.allowed.end(), AlgoProto{algo, proto}) != comm.allowed.end();
}

// F1: ncclTopoTuneModel turns NVLS off past one node (no CollNet) and NVLSTree off on one.
TEST(NcclEnables, NvlsOnOneNodeNvlsTreeOnMore) {
  const FakeModel model = parsed(kNvlsModel);
  const CommModel one = comm_on(model, {}, 1, 8);
  EXPECT_TRUE(allows(one, "NVLS"));
  EXPECT_FALSE(allows(one, "NVLSTree"));
  EXPECT_EQ(choose_algo_proto(model, one, "all_reduce", 1 << 26), (AlgoProto{"NVLS", "Simple"}));
  const CommModel two = comm_on(model, {}, 2, 4);
  EXPECT_FALSE(allows(two, "NVLS"));
  EXPECT_TRUE(allows(two, "NVLSTree"));
  EXPECT_NE(choose_algo_proto(model, two, "all_reduce", 1 << 26).algo, "NVLS") << "the default table's NVLS cannot run";
  // NCCL_ALGO=NVLS on two nodes leaves all_reduce nothing: its calls fail (ncclInvalidUsage).
  const CommModel forced = comm_on(model, {{"NCCL_ALGO", "NVLS"}}, 2, 4);
  EXPECT_TRUE(forced.allowed.empty());
  EXPECT_TRUE(forced.no_pair_by_list);
  EXPECT_NE(forced.no_pair.find("NVLS runs on one node only"), std::string::npos) << forced.no_pair;
}

// F20: CollNet needs a CollNet network and NCCL_COLLNET_ENABLE=1; the fake has no CollNet network.
TEST(NcclEnables, CollNetNeverRunsWithoutACollNetNetwork) {
  const FakeModel model = parsed(std::string(kNvlsModel).replace(
      std::string(kNvlsModel).find("  NVLSTree:"), 0, "  CollNetDirect: {Simple: {lat_us: 5, busbw_gbps: 9000}}\n"));
  EXPECT_FALSE(allows(comm_on(model, {}, 2, 4), "CollNetDirect"));
  EXPECT_FALSE(allows(comm_on(model, {{"NCCL_COLLNET_ENABLE", "1"}}, 2, 4), "CollNetDirect"));
  const CommModel forced = comm_on(model, {{"NCCL_ALGO", "CollNetDirect"}}, 2, 4);
  EXPECT_TRUE(forced.allowed.empty());
  EXPECT_NE(forced.no_pair.find("no CollNet network"), std::string::npos) << forced.no_pair;
}

// F2: ncclNvlsInit needs 2 GPUs of the communicator on a node (3 before 2.28.7); NCCL_NVLS_ENABLE=0.
TEST(NcclEnables, NvlsNeedsTwoGpusOnANodeAndItsSwitch) {
  const FakeModel model = parsed(kNvlsModel);
  EXPECT_FALSE(allows(comm_on(model, {}, 2, 1), "NVLSTree")) << "one GPU per node";
  EXPECT_EQ(comm_on(model, {}, 2, 1).nvls_channels, 0);
  EXPECT_FALSE(allows(comm_on(model, {{"NCCL_NVLS_ENABLE", "0"}}, 1, 8), "NVLS"));
  EXPECT_TRUE(allows(comm_on(model, {}, 1, 2), "NVLS"));
  FakeModel older = model;
  older.nccl_version = 22803;
  EXPECT_FALSE(allows(comm_on(older, {}, 1, 2), "NVLS")) << "gpuCount <= 2 before 2.28.7";
  EXPECT_TRUE(allows(comm_on(older, {}, 1, 4), "NVLS"));
  FakeModel no_multicast = parsed(std::string(kNvlsModel) + "nccl_log: {nvls: false}\n");
  EXPECT_FALSE(allows(comm_on(no_multicast, {}, 1, 8), "NVLS"));
}

// F3, F4: NVLS's own channels (16 on SM 9.0), moved by NCCL_NVLS_NCHANNELS and the CTA bounds,
// never by NCCL_MIN/MAX_NCHANNELS; its op time follows them.
TEST(NcclEnables, NvlsChannelsAreItsOwn) {
  const FakeModel model = parsed(kNvlsModel);
  const CommModel plain = comm_on(model, {}, 1, 8);
  EXPECT_EQ(plain.nvls_channels, 16);
  const CommModel min32 = comm_on(model, {{"NCCL_MIN_NCHANNELS", "32"}}, 1, 8);
  EXPECT_EQ(min32.channels, 32);
  EXPECT_EQ(min32.nvls_channels, 16);
  const AlgoProto nvls{"NVLS", "Simple"};
  EXPECT_DOUBLE_EQ(pair_time_us(model, min32, nvls, "all_reduce", 1 << 26),
                   pair_time_us(model, plain, nvls, "all_reduce", 1 << 26));
  EXPECT_LT(pair_time_us(model, min32, {"Ring", "Simple"}, "all_reduce", 1 << 26),
            pair_time_us(model, plain, {"Ring", "Simple"}, "all_reduce", 1 << 26));
  EXPECT_EQ(comm_on(model, {{"NCCL_NVLS_NCHANNELS", "24"}}, 1, 8).nvls_channels, 24);
  EXPECT_EQ(comm_on(model, {{"NCCL_NVLS_NCHANNELS", "0"}}, 1, 8).nvls_channels, 16) << "<= 0: NCCL decides";
  EXPECT_EQ(comm_on(model, {{"NCCL_MAX_CTAS", "8"}}, 1, 8).nvls_channels, 8);
  EXPECT_EQ(comm_on(model, {{"NCCL_MIN_CTAS", "20"}}, 1, 8).nvls_channels, 20);
  FakeModel blackwell = model;
  blackwell.devices.front().sm = 100;
  EXPECT_EQ(comm_on(blackwell, {}, 1, 8).nvls_channels, 24);
  EXPECT_EQ(comm_on(blackwell, {}, 2, 4).nvls_channels, 32);
  // The init line NCCL 2.28.9 prints (ncclNvlsInit).
  RankPlace place;
  place.local_ranks = 8;
  bool said = false;
  for (const LogLine& line : init_lines(model, {}, plain, place))
    said = said || line.message == "NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)";
  EXPECT_TRUE(said);
}

// F14: a tuner plugin's nChannels replaces NCCL's count for the call, within the pair's channels.
TEST(NcclEnables, APluginsChannelsTimeTheCall) {
  const FakeModel model = parsed(kNvlsModel);
  const CommModel comm = comm_on(model, {}, 1, 8);
  const AlgoProto ring{"Ring", "Simple"};
  EXPECT_GT(pair_time_us(model, comm, ring, "all_reduce", 1 << 26, 4), pair_time_us(model, comm, ring, "all_reduce", 1 << 26));
  EXPECT_DOUBLE_EQ(pair_time_us(model, comm, ring, "all_reduce", 1 << 26, 64),
                   pair_time_us(model, comm, ring, "all_reduce", 1 << 26)) << "never more than the communicator has";
}

// N2 / F2: NVLS kernels exist for some reductions only (ncclNvlsSupported).
TEST(NcclEnables, NvlsOnlyForTheReductionsItHasKernelsFor) {
  using namespace nccl_abi;
  EXPECT_TRUE(nvls_reduces("all_reduce", ncclSum, ncclFloat32));
  EXPECT_FALSE(nvls_reduces("all_reduce", ncclMax, ncclFloat32));
  EXPECT_TRUE(nvls_reduces("all_reduce", ncclMax, ncclBfloat16));
  EXPECT_FALSE(nvls_reduces("reduce_scatter", ncclProd, ncclInt32));
  EXPECT_FALSE(nvls_reduces("all_reduce", ncclAvg, ncclFloat32));
  EXPECT_FALSE(nvls_reduces("all_reduce", ncclSum, ncclInt8));
  EXPECT_TRUE(nvls_reduces("all_gather", ncclProd, ncclInt8));
  EXPECT_FALSE(pat_reduces("reduce_scatter", ncclAvg));
  EXPECT_TRUE(pat_reduces("reduce_scatter", ncclSum));
  EXPECT_TRUE(pat_reduces("all_gather", ncclAvg));
}

// ncclAvg runs (so its NVLS and PAT rules act): a sum, then a division by the rank count.
TEST(NcclEnables, AvgIsASumDividedByTheRanks) {
  using namespace nccl_abi;
  ASSERT_TRUE(supported_op(ncclAvg));
  std::vector<std::int32_t> ints{3, -7, 10};
  const std::vector<std::int32_t> more{5, 1, 11};
  reduce_into(ncclInt32, ncclAvg, ints.data(), more.data(), ints.size());
  divide_elements(ncclInt32, ints.data(), ints.size(), 2);
  EXPECT_EQ(ints, (std::vector<std::int32_t>{4, -3, 10}));
  std::vector<double> doubles{1.0, 2.5};
  const std::vector<double> others{2.0, 0.5};
  reduce_into(ncclFloat64, ncclAvg, doubles.data(), others.data(), doubles.size());
  divide_elements(ncclFloat64, doubles.data(), doubles.size(), 2);
  EXPECT_EQ(doubles, (std::vector<double>{1.5, 1.5}));
}

// A `nodes` entry whose default NCCL could never pick is an error naming its line.
TEST(NcclEnables, ANodesDefaultNcclCannotRunIsAnError) {
  const std::string nvls_on_two = std::string(kNvlsModel) +
                                  "nodes:\n  - min_nodes: 2\n    default: [{algo: NVLS, proto: Simple}]\n";
  EXPECT_NE(fake_model_error(nvls_on_two).find("model.yaml:13: nodes[0].default[0]: NVLS/Simple cannot be NCCL's choice on 2 node(s)"),
            std::string::npos)
      << fake_model_error(nvls_on_two);
  const std::string tree_on_one = std::string(kNvlsModel) +
                                  "nodes:\n  - min_nodes: 1\n    default: [{algo: NVLSTree, proto: Simple}]\n";
  EXPECT_NE(fake_model_error(tree_on_one).find("NCCL runs NVLSTree on more than one node only"), std::string::npos)
      << fake_model_error(tree_on_one);
  EXPECT_EQ(fake_model_error(std::string(kNvlsModel) +
                             "nodes:\n  - min_nodes: 2\n    default: [{algo: NVLSTree, proto: Simple}]\n"),
            "(parsed)");
}

// F6, N4: with nccl_model, NCCL's own pair and its pair under a list are nccl_model's cheapest,
// not the hardware's fastest.
constexpr const char* kModelledModel = R"(schema: nccltune/fake-model/v1
channels: {default: 16}
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 500}}
nccl_model:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 200}}
)";

TEST(NcclEnables, NcclsModelChoosesUnderLists) {
  const FakeModel model = parsed(kModelledModel);
  const CommModel own = comm_on(model, {}, 1, 8);
  const double large = 1 << 26;
  EXPECT_EQ(choose_algo_proto(model, own, "all_reduce", large), (AlgoProto{"Ring", "Simple"}));
  EXPECT_EQ(choose_algo_proto(model, own, "all_reduce", 1 << 20), (AlgoProto{"Ring", "LL128"}));
  EXPECT_EQ(choose_algo_proto(model, own, "all_reduce", 1024), (AlgoProto{"Tree", "LL"}));
  // NCCL_ALGO=Tree: NCCL's model rates Tree/LL128 cheapest; the hardware's fastest is Tree/Simple.
  const CommModel listed = comm_on(model, {{"NCCL_ALGO", "Tree"}}, 1, 8);
  EXPECT_EQ(choose_algo_proto(model, listed, "all_reduce", large), (AlgoProto{"Tree", "LL128"}));
  EXPECT_LT(pair_time_us(model, listed, {"Tree", "Simple"}, "all_reduce", large),
            pair_time_us(model, listed, {"Tree", "LL128"}, "all_reduce", large));
  // The tuning table is NCCL's model: Tree/Simple at 200 GB/s busbw (algbw 200 / (2*7/8)).
  std::vector<TuningTableRow> rows{{"AllReduce", "all_reduce", &model, &own}};
  bool printed = false;
  for (const std::string& line : tuning_table_lines(rows))
    printed = printed || line.find("    20.0/ 114.3 |") != std::string::npos;
  EXPECT_TRUE(printed);
  EXPECT_NE(fake_model_error(std::string(kModelledModel) + "default: [{algo: Ring, proto: LL}]\n").find("give either default or nccl_model"),
            std::string::npos);
}

// F7: LL128 off where NCCL does not trust it, until an NCCL_PROTO that does not exclude it.
TEST(NcclEnables, Ll128OffByDefaultOnUntilAListAllowsIt) {
  const FakeModel model = parsed(std::string(kModelledModel) + "ll128_default: false\n");
  EXPECT_FALSE(allows(comm_on(model, {}, 1, 8), "Ring", "LL128"));
  EXPECT_NE(choose_algo_proto(model, comm_on(model, {}, 1, 8), "all_reduce", 1 << 20).proto, "LL128");
  EXPECT_TRUE(allows(comm_on(model, {{"NCCL_PROTO", "^LL"}}, 1, 8), "Ring", "LL128"));
  EXPECT_EQ(choose_algo_proto(model, comm_on(model, {{"NCCL_PROTO", "^LL"}}, 1, 8), "all_reduce", 1 << 20),
            (AlgoProto{"Ring", "LL128"}));
  EXPECT_FALSE(allows(comm_on(model, {{"NCCL_PROTO", "^LL128"}}, 1, 8), "Ring", "LL128"));
  EXPECT_TRUE(allows(comm_on(model, {{"NCCL_PROTO", "allreduce:LL128,Simple"}}, 1, 8), "Ring", "LL128"));
  EXPECT_FALSE(allows(comm_on(model, {{"NCCL_PROTO", "allreduce:LL128"}}, 1, 8, "all_gather"), "Ring", "LL128"))
      << "a list for another function leaves this one's default";
  const FakeModel trusted_on_two =
      parsed(std::string(kModelledModel) + "ll128_default: false\nnodes:\n  - {min_nodes: 2, ll128_default: true}\n");
  EXPECT_TRUE(allows(comm_on(model_for_nodes(trusted_on_two, 2), {}, 2, 4), "Ring", "LL128"));
  EXPECT_FALSE(allows(comm_on(model_for_nodes(trusted_on_two, 1), {}, 1, 8), "Ring", "LL128"));
  EXPECT_NE(fake_model_error("schema: nccltune/fake-model/v1\nll128_default: false\ndefault: [{algo: Ring, proto: LL128}]\n"
                             "algos: {Ring: {LL128: {lat_us: 1, busbw_gbps: 1}}}\n")
                .find("ll128_default is false"),
            std::string::npos);
}

}  // namespace
}  // namespace nccltune::fake
