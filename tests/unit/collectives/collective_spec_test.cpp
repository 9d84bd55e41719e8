#include "collectives/collective_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "collectives/data_check.h"
#include "collectives/data_pattern.h"
#include "collectives/data_type.h"

using namespace nccltune;
using namespace nccltune::nccl_abi;

namespace {

const CollectiveSpec& spec(std::string_view name) {
  const CollectiveSpec* found = find_collective(name);
  EXPECT_NE(found, nullptr) << name;
  return *found;
}

// What a launch asked NCCL to do, recorded by the stand-in functions below.
struct Call {
  std::string function;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  int peer = -1;
};
std::vector<Call> calls;

NcclApi recording_api() {
  NcclApi api;
  api.ncclAllReduce = [](const void* s, void* r, size_t n, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                         cudaStream_t) {
    calls.push_back({"ncclAllReduce", s, r, n});
    return ncclSuccess;
  };
  api.ncclBroadcast = [](const void* s, void* r, size_t n, ncclDataType_t, int root, ncclComm_t,
                         cudaStream_t) {
    calls.push_back({"ncclBroadcast", s, r, n, root});
    return ncclSuccess;
  };
  api.ncclGroupStart = [] {
    calls.push_back({"ncclGroupStart"});
    return ncclSuccess;
  };
  api.ncclGroupEnd = [] {
    calls.push_back({"ncclGroupEnd"});
    return ncclSuccess;
  };
  api.ncclSend = [](const void* s, size_t n, ncclDataType_t, int peer, ncclComm_t, cudaStream_t) {
    calls.push_back({"ncclSend", s, nullptr, n, peer});
    return ncclSuccess;
  };
  api.ncclRecv = [](void* r, size_t n, ncclDataType_t, int peer, ncclComm_t, cudaStream_t) {
    calls.push_back({"ncclRecv", nullptr, r, n, peer});
    return peer == 2 ? ncclRemoteError : ncclSuccess;
  };
  return api;
}

}  // namespace

TEST(CollectiveSpec, FindsEveryCollectiveByName) {
  ASSERT_EQ(all_collectives().size(), 6u);
  for (const CollectiveSpec* each : all_collectives()) EXPECT_EQ(find_collective(each->name()), each);
  EXPECT_EQ(find_collective("gossip"), nullptr);
  EXPECT_EQ(collective_names(), "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall");
}

TEST(CollectiveSpec, LayoutsFollowNcclTests) {
  // 4 ranks, float, 1 MiB: nccl-tests' size and count columns.
  const size_t mib = 1 << 20;
  EXPECT_EQ(spec("all_reduce").layout(mib, 4, 4), (BufferLayout{mib, 262144, 262144, 262144, 0, 0}));
  EXPECT_EQ(spec("all_gather").layout(mib, 4, 4), (BufferLayout{mib, 65536, 65536, 262144, 65536, 0}));
  EXPECT_EQ(spec("reduce_scatter").layout(mib, 4, 4), (BufferLayout{mib, 65536, 262144, 65536, 0, 65536}));
  EXPECT_EQ(spec("broadcast").layout(mib, 4, 4), (BufferLayout{mib, 262144, 262144, 262144, 0, 0}));
  EXPECT_EQ(spec("reduce").layout(mib, 4, 4), (BufferLayout{mib, 262144, 262144, 262144, 0, 0}));
  EXPECT_EQ(spec("alltoall").layout(mib, 4, 4), (BufferLayout{mib, 65536, 262144, 262144, 0, 0}));
}

TEST(CollectiveSpec, LayoutsRoundDownAsNcclTests) {
  // 1000 bytes of float on 3 ranks: 250 elements, 83 per rank.
  EXPECT_EQ(spec("all_reduce").layout(1000, 4, 3), (BufferLayout{1000, 250, 250, 250, 0, 0}));
  EXPECT_EQ(spec("all_gather").layout(1000, 4, 3), (BufferLayout{996, 83, 83, 249, 83, 0}));
  EXPECT_EQ(spec("reduce_scatter").layout(1002, 2, 3), (BufferLayout{1002, 167, 501, 167, 0, 167}));
  EXPECT_EQ(spec("alltoall").layout(7, 4, 2), (BufferLayout{0, 0, 0, 0, 0, 0}));
}

TEST(CollectiveSpec, BusBandwidthFactorsComeFromBusBandwidth) {
  EXPECT_DOUBLE_EQ(spec("all_reduce").bus_bandwidth_factor(8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(spec("all_gather").bus_bandwidth_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(spec("reduce_scatter").bus_bandwidth_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(spec("alltoall").bus_bandwidth_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(spec("broadcast").bus_bandwidth_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(spec("reduce").bus_bandwidth_factor(8), 1.0);
}

TEST(CollectiveSpec, ExpectedElementsNameTheirSource) {
  using Kind = ExpectedElement::Kind;
  const BufferLayout gather = spec("all_gather").layout(64, 4, 4);  // 4 per rank
  EXPECT_EQ(spec("all_gather").expected(9, gather, 0, 4, 0), (ExpectedElement{Kind::rank_value, 2, 1}));
  const BufferLayout scatter = spec("reduce_scatter").layout(64, 4, 4);
  EXPECT_EQ(spec("reduce_scatter").expected(3, scatter, 2, 4, 0), (ExpectedElement{Kind::sum, 0, 11}));
  const BufferLayout all = spec("alltoall").layout(64, 4, 4);
  EXPECT_EQ(spec("alltoall").expected(6, all, 3, 4, 0), (ExpectedElement{Kind::rank_value, 1, 14}));
  const BufferLayout same = spec("all_reduce").layout(64, 4, 4);
  EXPECT_EQ(spec("all_reduce").expected(5, same, 1, 4, 0), (ExpectedElement{Kind::sum, 0, 5}));
  EXPECT_EQ(spec("broadcast").expected(5, same, 1, 4, 2), (ExpectedElement{Kind::rank_value, 2, 5}));
  EXPECT_EQ(spec("reduce").expected(5, same, 2, 4, 2), (ExpectedElement{Kind::sum, 0, 5}));
  EXPECT_EQ(spec("reduce").expected(5, same, 1, 4, 2).kind, Kind::unchecked);
  EXPECT_FALSE(spec("alltoall").checks_in_place());
  EXPECT_TRUE(spec("all_gather").checks_in_place());
  for (const char* name : {"all_reduce", "reduce_scatter", "reduce"})
    EXPECT_TRUE(spec(name).reduces()) << name;
  for (const char* name : {"all_gather", "broadcast", "alltoall"}) EXPECT_FALSE(spec(name).reduces()) << name;
  EXPECT_TRUE(spec("broadcast").uses_root());
}

TEST(CollectiveSpec, LaunchesPassTheArguments) {
  const NcclApi api = recording_api();
  float send[8] = {};
  float recv[8] = {};
  CollectiveArgs args;
  args.send = send;
  args.recv = recv;
  args.count = 8;
  args.root = 3;
  calls.clear();
  EXPECT_EQ(spec("all_reduce").launch(api, args), ncclSuccess);
  EXPECT_EQ(spec("broadcast").launch(api, args), ncclSuccess);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].function, "ncclAllReduce");
  EXPECT_EQ(calls[0].send, send);
  EXPECT_EQ(calls[0].recv, recv);
  EXPECT_EQ(calls[0].count, 8u);
  EXPECT_EQ(calls[1].function, "ncclBroadcast");
  EXPECT_EQ(calls[1].peer, 3);  // the root
}

TEST(CollectiveSpec, AlltoallIsOneGroupOfSendRecvPerPeer) {
  const NcclApi api = recording_api();
  float send[12] = {};
  float recv[12] = {};
  CollectiveArgs args;
  args.send = send;
  args.recv = recv;
  args.count = 4;
  args.element_size = sizeof(float);
  args.nranks = 3;
  calls.clear();
  // The recorder fails the receive from peer 2: the group still ends, the error is returned.
  EXPECT_EQ(spec("alltoall").launch(api, args), ncclRemoteError);
  ASSERT_EQ(calls.size(), 8u);
  EXPECT_EQ(calls.front().function, "ncclGroupStart");
  EXPECT_EQ(calls.back().function, "ncclGroupEnd");
  for (int peer = 0; peer < 3; ++peer) {
    const Call& sent = calls[1 + 2 * static_cast<size_t>(peer)];
    const Call& received = calls[2 + 2 * static_cast<size_t>(peer)];
    EXPECT_EQ(sent.function, "ncclSend");
    EXPECT_EQ(sent.peer, peer);
    EXPECT_EQ(sent.send, send + 4 * peer);
    EXPECT_EQ(sent.count, 4u);
    EXPECT_EQ(received.function, "ncclRecv");
    EXPECT_EQ(received.recv, recv + 4 * peer);
  }
}

TEST(CollectiveSpec, DataTypesParseAndConvert) {
  EXPECT_EQ(*parse_data_type("float"), DataType::float32);
  EXPECT_EQ(*parse_data_type("bf16"), DataType::bfloat16);
  EXPECT_EQ(*parse_data_type("half"), DataType::float16);
  EXPECT_EQ(*parse_data_type("int32"), DataType::int32);
  EXPECT_FALSE(parse_data_type("float8").ok());
  EXPECT_EQ(to_nccl(DataType::bfloat16), ncclBfloat16);
  EXPECT_EQ(element_size(DataType::float16), 2u);

  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);               // overflow: infinity
  EXPECT_EQ(float_to_half(0x1.0p-24f), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + 0x1.0p-11f), 0x3c00);  // a tie rounds to even
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001), 0x1.0p-24f);
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(257.0f), 0x4380);  // 257 is a tie between 256 and 258: even, 256
  EXPECT_EQ(bfloat16_to_float(0x4381), 258.0f);
  for (int i = 0; i <= 2048; ++i) EXPECT_EQ(half_to_float(float_to_half(static_cast<float>(i))), i);
  for (int i = 0; i <= 256; ++i) EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(static_cast<float>(i))), i);
}

TEST(CollectiveSpec, PatternSumsAreExactInEveryType) {
  for (DataType type : {DataType::float32, DataType::float16, DataType::bfloat16, DataType::int32}) {
    for (int nranks : {1, 2, 8, 300}) {
      const DataPattern pattern(type, nranks);
      const int64_t limit = type == DataType::bfloat16 ? 256 : type == DataType::float16 ? 2048 : 1 << 24;
      int64_t largest = 0;
      for (size_t index = 0; index < 5000; ++index) {
        int64_t sum = 0;
        for (int rank = 0; rank < nranks; ++rank) sum += pattern.value(rank, index);
        EXPECT_EQ(pattern.sum(index), sum);
        largest = std::max(largest, sum);
      }
      EXPECT_LE(largest, limit) << to_string(type) << " " << nranks;
      EXPECT_GT(largest, 0);
    }
  }
  // Ranks send different data, and the data changes along the buffer.
  const DataPattern pattern(DataType::float32, 4);
  int rank_differs = 0;
  int index_differs = 0;
  for (size_t index = 0; index < 100; ++index) {
    rank_differs += pattern.value(0, index) != pattern.value(1, index);
    index_differs += pattern.value(0, index) != pattern.value(0, index + 1);
  }
  EXPECT_GT(rank_differs, 50);
  EXPECT_GT(index_differs, 50);
}

TEST(CollectiveSpec, DataCheckCountsWrongElements) {
  const DataPattern pattern(DataType::float16, 4);
  const CollectiveSpec& all_reduce = spec("all_reduce");
  const BufferLayout layout = all_reduce.layout(2 * 1000, 2, 4);
  std::vector<std::byte> received(layout.recv_count * 2);
  for (size_t i = 0; i < layout.recv_count; ++i)
    encode_element(DataType::float16, static_cast<double>(pattern.sum(i)), received.data() + 2 * i);
  EXPECT_EQ(count_wrong_elements(all_reduce, layout, pattern, 1, 0, 0, received), 0);
  // A chunk starting at element 10 is checked against elements 10, 11, ...
  EXPECT_EQ(count_wrong_elements(all_reduce, layout, pattern, 1, 0, 10, std::span(received).subspan(20)), 0);
  encode_element(DataType::float16, static_cast<double>(pattern.sum(7) + 1), received.data() + 14);
  std::memset(received.data() + 100, 0xff, 2);  // NaN
  EXPECT_EQ(count_wrong_elements(all_reduce, layout, pattern, 1, 0, 0, received), 2);

  std::vector<std::byte> send(8 * 4);
  fill_send_elements(DataPattern(DataType::int32, 4), 2, 5, send);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(decode_element(DataType::int32, send.data() + 4 * i),
              static_cast<double>(DataPattern(DataType::int32, 4).value(2, 5 + i)));
}
