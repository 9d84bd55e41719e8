// Where NCCL lets a knob act, whatever a model's effects say, and how many channels a size runs
// on: each test pins a row of tests/fake-gpu/FIDELITY.md (F30-F34).
#include <gtest/gtest.h>

#include <string>

#include "channel_rules.h"
#include "comm_model.h"
#include "fake_model.h"
#include "fake_model_errors.h"
#include "knob_scope.h"
#include "nccl_env.h"
#include "nvls_force.h"

namespace nccltune::fake {
namespace {

using test_support::fake_model_error;

// One network model whose effects each make a knob look like a gain; `nccl_log` is appended.
std::string rules_model(const std::string& nccl_log, const std::string& more_effects = "") {
  return R"(schema: nccltune/fake-model/v1
default: [{max_bytes: 65536, algo: Tree, proto: LL}, {algo: Ring, proto: Simple}]
channels: {default: 16, busbw_scale: {1: 0.1, 2: 0.2, 4: 0.4, 8: 0.7, 16: 1.0, 32: 1.1}}
algos:
  Ring: {LL: {lat_us: 9, busbw_gbps: 40}, LL128: {lat_us: 16, busbw_gbps: 300}, Simple: {lat_us: 28, busbw_gbps: 360}}
  Tree: {LL: {lat_us: 7, busbw_gbps: 35}, LL128: {lat_us: 15, busbw_gbps: 250}, Simple: {lat_us: 20, busbw_gbps: 300}}
effects:
  - {when: {NCCL_IB_QPS_PER_CONNECTION: "4"}, busbw_scale: 1.2}
  - {when: {NCCL_IB_SPLIT_DATA_ON_QPS: "1"}, busbw_scale: 1.1}
  - {when: {NCCL_NET_GDR_LEVEL: SYS}, busbw_scale: 1.3}
  - {when: {NCCL_NET_GDR_READ: "1"}, busbw_scale: 1.05}
  - {when: {NCCL_GDRCOPY_ENABLE: "1"}, lat_scale: 0.9}
  - {when: {NCCL_NTHREADS: "256"}, busbw_scale: 1.25}
  - {when: {NCCL_BUFFSIZE: "8388608"}, busbw_scale: 1.15}
)" + more_effects +
         "nccl_log: " + nccl_log + "\n";
}

FakeModel rules_parsed(const std::string& text) {
  Result<FakeModel> model = parse_fake_model(text, "model.yaml");
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? *model : FakeModel{};
}

CommModel rules_comm(const FakeModel& model, const NcclEnv& env, int nodes) {
  CommNodes placed;
  placed.present.clear();
  for (int node = 0; node < nodes; ++node) placed.present.push_back(node);
  placed.count = nodes;
  placed.fewest_local_ranks = 4;
  Result<CommModel> comm = resolve_comm_model(model, env, 0, 4 * nodes, "all_reduce", placed);
  EXPECT_TRUE(comm.ok()) << comm.error();
  return comm.ok() ? *comm : CommModel{};
}

constexpr double kLarge = 1 << 28;
const AlgoProto kRingSimple{"Ring", "Simple"};

double ring_simple_us(const FakeModel& model, const NcclEnv& env, int nodes, double bytes = kLarge) {
  return pair_time_us(model, rules_comm(model, env, nodes), kRingSimple, "all_reduce", bytes);
}

// F30: the IB transport alone reads NCCL_IB_*: with a Socket network, or on one node (no network),
// they act on nothing, whatever the model says.
TEST(NcclKnobRules, IbVariablesActOnlyOnAnIbNetworkOfSeveralNodes) {
  const FakeModel socket = rules_parsed(rules_model("{transport: Socket, devices: [eth0], gdr: false}"));
  const FakeModel ib = rules_parsed(rules_model("{transport: IB}"));
  const FakeModel roce = rules_parsed(rules_model("{transport: RoCE}"));
  for (const char* variable : {"NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS"}) {
    const NcclEnv env{{variable, std::string(variable) == "NCCL_IB_QPS_PER_CONNECTION" ? "4" : "1"}};
    EXPECT_DOUBLE_EQ(ring_simple_us(socket, env, 2), ring_simple_us(socket, {}, 2)) << variable << " on Socket";
    EXPECT_DOUBLE_EQ(ring_simple_us(ib, env, 1), ring_simple_us(ib, {}, 1)) << variable << " on one node";
    EXPECT_LT(ring_simple_us(ib, env, 2), ring_simple_us(ib, {}, 2)) << variable << " on IB, 2 nodes";
    EXPECT_LT(ring_simple_us(roce, env, 2), ring_simple_us(roce, {}, 2)) << variable << " on RoCE, 2 nodes";
  }
  EXPECT_DOUBLE_EQ(rules_comm(ib, {{"NCCL_IB_QPS_PER_CONNECTION", "4"}}, 2).busbw_scale, 1.2);
  // The one list: every NCCL_IB_* the IB transport reads, nothing else.
  EXPECT_TRUE(is_ib_transport_variable("NCCL_IB_QPS_PER_CONNECTION"));
  EXPECT_TRUE(is_ib_transport_variable("NCCL_IB_SPLIT_DATA_ON_QPS"));
  EXPECT_TRUE(is_ib_transport_variable("NCCL_IB_HCA"));
  EXPECT_FALSE(is_ib_transport_variable("NCCL_NET_GDR_LEVEL"));
  EXPECT_FALSE(is_ib_transport_variable("NCCL_SOCKET_NTHREADS"));
}

// An effect that also holds with the variable unset describes NCCL's default: it acts anywhere.
TEST(NcclKnobRules, AnEffectThatHoldsUnsetIsNcclsDefaultAndActsAnywhere) {
  const FakeModel socket = rules_parsed(rules_model(
      "{transport: Socket, devices: [eth0], gdr: false}",
      "  - {when: {NCCL_IB_TIMEOUT: [null, \"20\"]}, lat_scale: 1.5}\n"));
  EXPECT_DOUBLE_EQ(rules_comm(socket, {}, 2).lat_scale, 1.5);
  EXPECT_DOUBLE_EQ(rules_comm(socket, {{"NCCL_IB_TIMEOUT", "20"}}, 2).lat_scale, 1.5);
}

// F31: GDR's variables act only where NIC and GPU support GPUDirect RDMA (ncclTopoCheckGdr).
TEST(NcclKnobRules, GdrVariablesActOnlyWithGdr) {
  const FakeModel without = rules_parsed(rules_model("{transport: IB, gdr: false}"));
  const FakeModel with = rules_parsed(rules_model("{transport: IB, gdr: true}"));
  for (const NcclEnv& env : {NcclEnv{{"NCCL_NET_GDR_LEVEL", "SYS"}}, NcclEnv{{"NCCL_NET_GDR_READ", "1"}}}) {
    EXPECT_DOUBLE_EQ(ring_simple_us(without, env, 2), ring_simple_us(without, {}, 2)) << env.begin()->first;
    EXPECT_LT(ring_simple_us(with, env, 2), ring_simple_us(with, {}, 2)) << env.begin()->first;
  }
  EXPECT_DOUBLE_EQ(rules_comm(without, {{"NCCL_GDRCOPY_ENABLE", "1"}}, 2).lat_scale, 1);
  EXPECT_DOUBLE_EQ(rules_comm(with, {{"NCCL_GDRCOPY_ENABLE", "1"}}, 2).lat_scale, 0.9);
}

// F32: NCCL_NTHREADS sets Ring's Simple and LL threads (Tree runs 640 always); NCCL_BUFFSIZE
// sizes Simple's buffers. Their effects act there only, whatever scope the model gives them.
TEST(NcclKnobRules, ThreadsAndBufferSizesActOnlyWhereNcclUsesThem) {
  const FakeModel model = rules_parsed(rules_model("{transport: IB}"));
  const auto us = [&](const NcclEnv& env, const AlgoProto& pair) {
    return pair_time_us(model, rules_comm(model, env, 2), pair, "all_reduce", kLarge);
  };
  const NcclEnv threads{{"NCCL_NTHREADS", "256"}};
  EXPECT_LT(us(threads, kRingSimple), us({}, kRingSimple));
  EXPECT_LT(us(threads, {"Ring", "LL"}), us({}, {"Ring", "LL"}));
  EXPECT_DOUBLE_EQ(us(threads, {"Ring", "LL128"}), us({}, {"Ring", "LL128"}));
  EXPECT_DOUBLE_EQ(us(threads, {"Tree", "Simple"}), us({}, {"Tree", "Simple"}));
  const NcclEnv buffers{{"NCCL_BUFFSIZE", "8388608"}};
  EXPECT_LT(us(buffers, kRingSimple), us({}, kRingSimple));
  EXPECT_LT(us(buffers, {"Tree", "Simple"}), us({}, {"Tree", "Simple"}));
  EXPECT_DOUBLE_EQ(us(buffers, {"Ring", "LL"}), us({}, {"Ring", "LL"}));
  EXPECT_DOUBLE_EQ(us(buffers, {"Tree", "LL128"}), us({}, {"Tree", "LL128"}));
  // A model that scopes NCCL_BUFFSIZE to LL128 gets nothing: NCCL's scope and its own do not meet.
  const FakeModel wrong = rules_parsed(rules_model(
      "{transport: IB}", "  - {when: {NCCL_BUFFSIZE: \"2097152\"}, protos: [LL128], busbw_scale: 1.5}\n"));
  const CommModel comm = rules_comm(wrong, {{"NCCL_BUFFSIZE", "2097152"}}, 2);
  EXPECT_TRUE(comm.algo_effects.empty());
  EXPECT_DOUBLE_EQ(comm.busbw_scale, 1);
}

// An effect's `algos` and `protos` scope it; read strictly.
TEST(NcclKnobRules, EffectScopesActOnTheirPairsAndParseStrictly) {
  const FakeModel model = rules_parsed(rules_model(
      "{transport: IB}", "  - {when: {NCCL_P2P_LEVEL: SYS}, algos: [ring], protos: [ll, simple], busbw_scale: 2}\n"));
  ASSERT_EQ(model.effects.back().algos, std::vector<std::string>{"Ring"});
  ASSERT_EQ(model.effects.back().protos, (std::vector<std::string>{"LL", "Simple"}));
  const NcclEnv p2p{{"NCCL_P2P_LEVEL", "SYS"}};
  const CommModel comm = rules_comm(model, p2p, 2);
  EXPECT_LT(pair_time_us(model, comm, kRingSimple, "all_reduce", kLarge), ring_simple_us(model, {}, 2));
  EXPECT_DOUBLE_EQ(pair_time_us(model, comm, {"Tree", "Simple"}, "all_reduce", kLarge),
                   pair_time_us(model, rules_comm(model, {}, 2), {"Tree", "Simple"}, "all_reduce", kLarge));
  const auto with_effect = [](const std::string& effect) {
    return fake_model_error(rules_model("{transport: IB}", "  - " + effect + "\n"));
  };
  EXPECT_EQ(with_effect("{when: {NCCL_P2P_LEVEL: SYS}, protos: [Fast]}"),
            "model.yaml:15: effects[7].protos[0]: 'Fast' is not an NCCL protocol");
  EXPECT_EQ(with_effect("{when: {NCCL_P2P_LEVEL: SYS}, algos: []}"),
            "model.yaml:15: effects[7].algos: is empty (leave it out to act on every algorithm)");
  EXPECT_EQ(with_effect("{when: {NCCL_P2P_LEVEL: SYS}, protos: [LL, ll]}"),
            "model.yaml:15: effects[7].protos[1]: names LL twice");
  EXPECT_EQ(with_effect("{when: {NCCL_P2P_LEVEL: SYS}, algos: Ring}"),
            "model.yaml:15: effects[7].algos: must be a list");
}

// F34: topoGetAlgoInfo drops Ring/Tree channels while bytes < channels x threads x threshold,
// and the planner gives each channel at least 16 KiB of traffic (32 KiB from 2.29.2).
TEST(NcclKnobRules, ChannelsAreReducedPerSize) {
  const ThreadCounts defaults;
  const auto at = [&](const char* algo, const char* proto, double bytes, int channels, int version = 22809,
                      const ThreadCounts& threads = ThreadCounts{}) {
    return channels_at_size({algo, proto, "all_reduce", bytes, 8, version}, channels, threads);
  };
  // Ring/Simple: 512 threads x 64 = 32 KiB per channel.
  EXPECT_EQ(at("Ring", "Simple", 1000, 16), 1);
  EXPECT_EQ(at("Ring", "Simple", 3 * 32768 + 5, 16), 3);
  EXPECT_EQ(at("Ring", "Simple", 1 << 20, 16), 16);
  EXPECT_EQ(at("Ring", "Simple", 1 << 20, 64), 32);
  // Ring/LL: 512 x 8 x nRanks (8) = 32 KiB; LL128: 640 x 8 = 5 KiB, then 16 KiB of traffic (2 x bytes).
  EXPECT_EQ(at("Ring", "LL", 65536, 16), 2);
  EXPECT_EQ(at("Tree", "LL128", 65536, 16), 8);
  EXPECT_EQ(at("Tree", "LL128", 65536, 16, 23007), 4) << "32 KiB of traffic per channel";
  // NCCL_NTHREADS=256 halves Simple's bytes per channel.
  EXPECT_EQ(at("Ring", "Simple", 65536, 16, 22809, ThreadCounts{256, 640}), 4);
  EXPECT_EQ(thread_counts({{"NCCL_NTHREADS", "256"}}).simple_ll, 256);
  EXPECT_EQ(thread_counts({{"NCCL_NTHREADS", "100"}}).simple_ll, 512) << "not a multiple of 32: the maximum";
  EXPECT_EQ(thread_counts({{"NCCL_NTHREADS", "32"}}).simple_ll, 64) << "below the minimum: the minimum";
  EXPECT_EQ(thread_counts({{"NCCL_NTHREADS", "1024"}}).simple_ll, 512);
  // NVLS keeps its channels but for the planner's traffic rule; a plugin's count is kept too.
  EXPECT_EQ(at("NVLS", "Simple", 65536, 16), 8);
  EXPECT_EQ(channels_at_size({"Ring", "Simple", "all_reduce", 65536, 8, 22809}, 16, defaults, true), 8);
}

// More channels (NCCL_MIN_NCHANNELS, NCCL_MIN_CTAS) help large sizes only; NCCL's defaults keep
// the model's times at every size.
TEST(NcclKnobRules, SmallSizesGainNothingFromMoreChannels) {
  const FakeModel model = rules_parsed(rules_model("{transport: IB}"));
  for (const char* variable : {"NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS"}) {
    const NcclEnv more{{variable, "32"}};
    EXPECT_DOUBLE_EQ(ring_simple_us(model, more, 2, 65536), ring_simple_us(model, {}, 2, 65536)) << variable;
    EXPECT_DOUBLE_EQ(ring_simple_us(model, more, 2, 256 << 10), ring_simple_us(model, {}, 2, 256 << 10));
    EXPECT_LT(ring_simple_us(model, more, 2, 1 << 22), ring_simple_us(model, {}, 2, 1 << 22)) << variable;
    EXPECT_LT(ring_simple_us(model, more, 2), ring_simple_us(model, {}, 2)) << variable;
  }
  // Fewer channels cost nothing where NCCL's defaults use as few.
  const NcclEnv fewer{{"NCCL_MAX_NCHANNELS", "4"}};
  EXPECT_DOUBLE_EQ(ring_simple_us(model, fewer, 2, 65536), ring_simple_us(model, {}, 2, 65536));
  EXPECT_GT(ring_simple_us(model, fewer, 2), ring_simple_us(model, {}, 2));
  // At the defaults the time is the formula at the default channels, at every size.
  const CommModel comm = rules_comm(model, {}, 2);
  for (double bytes : {1000.0, 65536.0, kLarge})
    EXPECT_DOUBLE_EQ(pair_time_us(model, comm, kRingSimple, "all_reduce", bytes),
                     cost_time_us(pair_cost(model, comm, kRingSimple, "all_reduce"), bytes));
}

// F33: NCCL_NVLS_ENABLE=1 forces NVLS without asking for multicast; without it init fails.
TEST(NcclKnobRules, NvlsEnableOneWithoutMulticastFailsInit) {
  const FakeModel no_multicast = rules_parsed(rules_model("{transport: IB, nvls: false}"));
  FakeModel multicast = no_multicast;
  multicast.nccl_log.nvls = true;
  CommNodes one_node;
  one_node.fewest_local_ranks = 8;
  const NcclEnv forced{{"NCCL_NVLS_ENABLE", "1"}};
  EXPECT_EQ(forced_nvls_failure(no_multicast, forced, one_node, 8),
            std::optional<std::string>("Cuda failure 801 'operation not supported'"));
  EXPECT_EQ(forced_nvls_failure(no_multicast, {{"NCCL_NVLS_ENABLE", "3"}}, one_node, 8),
            forced_nvls_failure(no_multicast, forced, one_node, 8))
      << "any value but 0 and 2 forces";
  EXPECT_FALSE(forced_nvls_failure(multicast, forced, one_node, 8));
  EXPECT_FALSE(forced_nvls_failure(no_multicast, {{"NCCL_NVLS_ENABLE", "2"}}, one_node, 8));
  EXPECT_FALSE(forced_nvls_failure(no_multicast, {{"NCCL_NVLS_ENABLE", "0"}}, one_node, 8));
  EXPECT_FALSE(forced_nvls_failure(no_multicast, {}, one_node, 8));
  CommNodes one_gpu_each;
  one_gpu_each.count = 2;
  one_gpu_each.present = {0, 1};
  one_gpu_each.fewest_local_ranks = 1;
  EXPECT_FALSE(forced_nvls_failure(no_multicast, forced, one_gpu_each, 2)) << "ncclNvlsInit returns first";
}

}  // namespace
}  // namespace nccltune::fake
