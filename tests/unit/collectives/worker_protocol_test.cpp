// The pipe protocol between a trial's parent and its worker (collectives/worker_protocol.h):
// the start command's config round trip, every event encoded and decoded, malformed lines
// rejected, and the unique id's hex form.
#include "collectives/worker_protocol.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

using namespace nccltune;
using nlohmann::json;

namespace {

WorkerConfig sample_config() {
  WorkerConfig c;
  c.rank = 3;
  c.nranks = 16;
  c.device = 7;
  c.cuda_lib = "/opt/fake/libfakecuda.so";
  c.nccl_lib = "/opt/torch/lib/libnccl.so.2";
  c.collectives = {"reduce_scatter", "alltoall"};
  c.sweep.min_bytes = 8;
  c.sweep.max_bytes = std::size_t{16} << 30;  // beyond 32 bits
  c.sweep.step_factor = 4;
  c.sweep.step_bytes = 12345;
  c.sweep.iterations = 7;
  c.sweep.warmup = 2;
  c.sweep.check = false;
  c.sweep.type = DataType::bfloat16;
  c.sweep.root = 5;
  c.sweep.sizes = {1536, 3u << 20};
  return c;
}

// Encodes, decodes and encodes again: the line must not change, whatever fields the event has.
WorkerEvent round_trip(const WorkerEvent& event) {
  const std::string line = encode_event(event);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "an event is one line: " << line;
  Result<WorkerEvent> decoded = decode_event(line);
  EXPECT_TRUE(decoded.ok()) << decoded.error() << " in " << line;
  if (!decoded.ok()) return {};
  EXPECT_EQ(encode_event(*decoded), line);
  EXPECT_EQ(decoded->kind, event.kind);
  return *decoded;
}

}  // namespace

TEST(WorkerProtocol, ConfigRoundTrip) {
  const WorkerConfig c = sample_config();
  const json j = worker_config_to_json(c);
  EXPECT_EQ(j.at("cmd"), "start");
  // Through text, as it travels on the pipe.
  Result<WorkerConfig> back = worker_config_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->nranks, 16);
  EXPECT_EQ(back->device, 7);
  EXPECT_EQ(back->cuda_lib, c.cuda_lib);
  EXPECT_EQ(back->nccl_lib, c.nccl_lib);
  EXPECT_EQ(back->collectives, (std::vector<std::string>{"reduce_scatter", "alltoall"}));
  EXPECT_EQ(back->sweep.min_bytes, 8u);
  EXPECT_EQ(back->sweep.max_bytes, std::size_t{16} << 30);
  EXPECT_EQ(back->sweep.step_factor, 4);
  EXPECT_EQ(back->sweep.step_bytes, 12345u);
  EXPECT_EQ(back->sweep.iterations, 7);
  EXPECT_EQ(back->sweep.warmup, 2);
  EXPECT_FALSE(back->sweep.check);
  EXPECT_EQ(back->sweep.op, ReductionOp::sum);
  EXPECT_EQ(back->sweep.type, DataType::bfloat16);
  EXPECT_EQ(back->sweep.root, 5);
  EXPECT_EQ(back->sweep.sizes, (std::vector<std::size_t>{1536, 3u << 20}));
  // Every field, including any added later, survives.
  EXPECT_EQ(worker_config_to_json(*back), j);
}

TEST(WorkerProtocol, ConfigDefaultsRoundTrip) {
  const WorkerConfig c;
  Result<WorkerConfig> back = worker_config_from_json(worker_config_to_json(c));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->cuda_lib, "libcuda.so.1");
  EXPECT_EQ(back->nccl_lib, "libnccl.so.2");
  EXPECT_EQ(back->collectives, std::vector<std::string>{"all_reduce"});
  EXPECT_EQ(worker_config_to_json(*back), worker_config_to_json(c));
}

TEST(WorkerProtocol, ConfigErrors) {
  json j = worker_config_to_json(sample_config());
  j.erase("nranks");
  Result<WorkerConfig> missing = worker_config_from_json(j);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("worker config"), std::string::npos) << missing.error();
  EXPECT_NE(missing.error().find("nranks"), std::string::npos) << missing.error();

  j = worker_config_to_json(sample_config());
  j["rank"] = "three";
  EXPECT_FALSE(worker_config_from_json(j).ok());

  j = worker_config_to_json(sample_config());
  j["type"] = "float128";
  Result<WorkerConfig> type = worker_config_from_json(j);
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.error().find("float128"), std::string::npos) << type.error();

  j = worker_config_to_json(sample_config());
  j["op"] = "xor";
  EXPECT_FALSE(worker_config_from_json(j).ok());

  EXPECT_FALSE(worker_config_from_json(json::array()).ok());
  EXPECT_FALSE(worker_config_from_json(json(nullptr)).ok());
}

TEST(WorkerProtocol, LoadedEvent) {
  WorkerEvent e;
  e.kind = WorkerEvent::Kind::loaded;
  e.nccl_version = 22809;
  e.cuda_driver = 13000;
  e.device.name = "NVIDIA H100 80GB HBM3";
  e.device.pci = "0000:18:00.0";
  const WorkerEvent back = round_trip(e);
  EXPECT_EQ(back.nccl_version, 22809);
  EXPECT_EQ(back.cuda_driver, 13000);
  EXPECT_EQ(back.device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back.device.pci, "0000:18:00.0");
  EXPECT_EQ(json::parse(encode_event(e)).at("event"), "loaded");
}

TEST(WorkerProtocol, UniqueIdEvent) {
  std::array<unsigned char, 128> id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 37 + 11);
  WorkerEvent e;
  e.kind = WorkerEvent::Kind::unique_id;
  e.id_hex = bytes_to_hex(id.data(), id.size());
  const WorkerEvent back = round_trip(e);
  EXPECT_EQ(back.id_hex, e.id_hex);
  EXPECT_EQ(back.id_hex.size(), 256u);
}

TEST(WorkerProtocol, ReadyAndDoneEvents) {
  WorkerEvent ready;
  ready.kind = WorkerEvent::Kind::ready;
  round_trip(ready);
  EXPECT_EQ(encode_event(ready), R"({"event":"ready"})");
  WorkerEvent done;
  done.kind = WorkerEvent::Kind::done;
  round_trip(done);
  EXPECT_EQ(encode_event(done), R"({"event":"done"})");
}

TEST(WorkerProtocol, ConfigWithoutCollectivesIsAnError) {
  json j = worker_config_to_json(sample_config());
  j["collectives"] = json::array();
  const Result<WorkerConfig> back = worker_config_from_json(j);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().find("no collective"), std::string::npos) << back.error();
}

TEST(WorkerProtocol, SizeEvent) {
  WorkerEvent e;
  e.kind = WorkerEvent::Kind::size;
  e.op = "reduce_scatter";
  e.size.bytes = std::size_t{1} << 33;
  e.size.count = std::size_t{1} << 31;
  e.size.out_of_place_us = 27.8125;
  e.size.in_place_us = 27.5;
  e.size.out_of_place_wrong = 0;
  e.size.in_place_wrong = 12;
  const WorkerEvent back = round_trip(e);
  EXPECT_EQ(back.op, "reduce_scatter");
  EXPECT_EQ(back.size.bytes, std::size_t{1} << 33);
  EXPECT_EQ(back.size.count, std::size_t{1} << 31);
  EXPECT_DOUBLE_EQ(back.size.out_of_place_us, 27.8125);
  ASSERT_TRUE(back.size.in_place_us.has_value());
  EXPECT_DOUBLE_EQ(*back.size.in_place_us, 27.5);
  EXPECT_EQ(back.size.out_of_place_wrong, std::optional<int64_t>(0));
  EXPECT_EQ(back.size.in_place_wrong, std::optional<int64_t>(12));
}

TEST(WorkerProtocol, PairModeConfigAndSizeEvents) {
  WorkerConfig c = sample_config();
  c.pairs = {{"Tree", "LL", 0, 0}, {"NVLS", "Simple", 4, 2}};
  c.tuner_plugin = "/opt/nccltune/lib/libnccl-tuner-nccltune.so";
  Result<WorkerConfig> back = worker_config_from_json(json::parse(worker_config_to_json(c).dump()));
  ASSERT_TRUE(back.ok()) << back.error();
  ASSERT_EQ(back->pairs.size(), 2u);
  EXPECT_EQ(back->pairs[1].algo, "NVLS");
  EXPECT_EQ(back->pairs[1].algorithm, 4);
  EXPECT_EQ(back->pairs[1].protocol, 2);
  EXPECT_EQ(back->tuner_plugin, c.tuner_plugin);
  // Pairs need the plugin that forces them.
  json no_plugin = worker_config_to_json(c);
  no_plugin["tuner_plugin"] = "";
  EXPECT_FALSE(worker_config_from_json(no_plugin).ok());

  WorkerEvent e;
  e.kind = WorkerEvent::Kind::size;
  e.op = "all_reduce";
  e.pair = 1;
  e.unavailable = true;
  const WorkerEvent paired = round_trip(e);
  EXPECT_EQ(paired.pair, 1);
  EXPECT_TRUE(paired.unavailable);
  e.pair = -1;  // not pair mode: neither key is written
  EXPECT_EQ(encode_event(e).find("pair"), std::string::npos);
  EXPECT_EQ(round_trip(e).pair, -1);
}

TEST(WorkerProtocol, ServiceCountingConfigAndSizeEvents) {
  WorkerConfig c = sample_config();
  c.count_service = true;
  c.tuner_plugin = "/opt/nccltune/lib/libnccl-tuner-nccltune.so";
  Result<WorkerConfig> back = worker_config_from_json(json::parse(worker_config_to_json(c).dump()));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_TRUE(back->count_service);
  json no_plugin = worker_config_to_json(c);
  no_plugin["tuner_plugin"] = "";
  EXPECT_FALSE(worker_config_from_json(no_plugin).ok());  // counting needs the plugin's block

  WorkerEvent e;
  e.kind = WorkerEvent::Kind::size;
  e.op = "all_gather";
  EXPECT_FALSE(round_trip(e).service);  // not counting: no keys
  EXPECT_EQ(encode_event(e).find("served"), std::string::npos);
  // A reason quoting a path that is not UTF-8 still makes one line of JSON.
  e.service = PluginService{30, 2, "not using /p/\xff.yaml: tuned for 8 GPUs per node"};
  const WorkerEvent counted = round_trip(e);
  ASSERT_TRUE(counted.service);
  EXPECT_EQ(counted.service->served, 30u);
  EXPECT_EQ(counted.service->declined, 2u);
  EXPECT_EQ(counted.service->declined_why, "not using /p/\xef\xbf\xbd.yaml: tuned for 8 GPUs per node");
}

TEST(WorkerProtocol, SizeEventWithoutInPlaceOrCheck) {
  // alltoall has no in-place variant; -c 0 has no #wrong: both travel as null.
  WorkerEvent e;
  e.kind = WorkerEvent::Kind::size;
  e.size.bytes = 1024;
  e.size.count = 256;
  e.size.out_of_place_us = 7.25;
  const std::string line = encode_event(e);
  EXPECT_NE(line.find(R"("ip_us":null)"), std::string::npos) << line;
  const WorkerEvent back = round_trip(e);
  EXPECT_FALSE(back.size.in_place_us.has_value());
  EXPECT_FALSE(back.size.out_of_place_wrong.has_value());
  EXPECT_FALSE(back.size.in_place_wrong.has_value());
  // Absent keys read as null too.
  Result<WorkerEvent> minimal =
      decode_event(R"({"event":"size","op":"alltoall","bytes":8,"count":2,"oop_us":7})");
  ASSERT_TRUE(minimal.ok()) << minimal.error();
  EXPECT_FALSE(minimal->size.in_place_us.has_value());
  EXPECT_FALSE(minimal->size.out_of_place_wrong.has_value());
}

TEST(WorkerProtocol, ErrorEvent) {
  WorkerEvent e;
  e.kind = WorkerEvent::Kind::error;
  e.stage = "load";
  e.message = "/nonexistent/libnccl.so.2: cannot open shared object file: \"quoted\"\nsecond line";
  const WorkerEvent back = round_trip(e);
  EXPECT_EQ(back.stage, "load");
  EXPECT_EQ(back.message, e.message);  // quotes and newlines are escaped, not lost
}

TEST(WorkerProtocol, MalformedLinesAreErrors) {
  const std::vector<std::string> bad = {
      "",
      "not json",
      "{\"event\":\"ready\"",                           // truncated
      "[]",                                             // not an object
      "{}",                                             // no event
      "{\"event\":42}",                                 // event not a string
      "{\"event\":\"bogus\"}",                          // unknown event
      "{\"event\":\"loaded\",\"nccl_version\":22809}",  // fields missing
      "{\"event\":\"loaded\",\"nccl_version\":\"x\",\"cuda_driver\":1,\"device\":{\"name\":\"a\",\"pci\":"
      "\"b\"}}",
      "{\"event\":\"unique_id\"}",
      "{\"event\":\"size\",\"bytes\":8,\"count\":2}",  // no time
      "{\"event\":\"size\",\"bytes\":8,\"count\":2,\"oop_us\":\"fast\"}",
      "{\"event\":\"error\",\"stage\":\"init\"}",  // no message
  };
  for (const auto& line : bad) {
    Result<WorkerEvent> decoded = decode_event(line);
    EXPECT_FALSE(decoded.ok()) << "accepted: " << line;
    if (!decoded.ok()) {
      EXPECT_FALSE(decoded.error().empty()) << line;
    }
  }
  Result<WorkerEvent> unknown = decode_event(R"({"event":"bogus"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("bogus"), std::string::npos) << unknown.error();
}

TEST(WorkerProtocol, HexRoundTrip) {
  std::array<unsigned char, 256> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<unsigned char>(i);
  const std::string hex = bytes_to_hex(all.data(), all.size());
  ASSERT_EQ(hex.size(), 512u);
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(504), "fcfdfeff");
  std::array<unsigned char, 256> back{};
  ASSERT_TRUE(hex_to_bytes(hex, back.data(), back.size()));
  EXPECT_EQ(back, all);

  // Upper case is read too.
  unsigned char two[2] = {};
  ASSERT_TRUE(hex_to_bytes("ABcd", two, 2));
  EXPECT_EQ(two[0], 0xab);
  EXPECT_EQ(two[1], 0xcd);

  EXPECT_EQ(bytes_to_hex(nullptr, 0), "");
  EXPECT_TRUE(hex_to_bytes("", nullptr, 0));
}

TEST(WorkerProtocol, MalformedHexIsRejected) {
  unsigned char out[4] = {1, 2, 3, 4};
  EXPECT_FALSE(hex_to_bytes("0011223", out, 4));     // odd length
  EXPECT_FALSE(hex_to_bytes("001122", out, 4));      // too short
  EXPECT_FALSE(hex_to_bytes("0011223344", out, 4));  // too long
  EXPECT_FALSE(hex_to_bytes("001122zz", out, 4));    // not hex
  EXPECT_FALSE(hex_to_bytes("0011 233", out, 4));
  EXPECT_FALSE(hex_to_bytes("-0112233", out, 4));
}

// Shapes: the communicators to sweep on and the layout their splits need travel in the config;
// a size event names its communicator unless it is the world; done says how many were made.
TEST(WorkerProtocol, CommsConfigAndEvents) {
  WorkerConfig c = sample_config();  // 16 ranks
  c.comms = {"world", "rail", "node"};
  c.node = 1;
  c.nodes = 2;
  c.local_ranks = 8;
  Result<WorkerConfig> back = worker_config_from_json(json::parse(worker_config_to_json(c).dump()));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->comms, (std::vector<std::string>{"world", "rail", "node"}));
  EXPECT_EQ(back->node, 1);
  EXPECT_EQ(back->nodes, 2);
  EXPECT_EQ(back->local_ranks, 8);
  EXPECT_EQ(comm_rank_and_size(*back, "world"), (std::pair<int, int>{3, 16}));
  EXPECT_EQ(comm_rank_and_size(*back, "rail"), (std::pair<int, int>{1, 2}));
  EXPECT_EQ(comm_rank_and_size(*back, "node"), (std::pair<int, int>{7, 8}));

  // A start command without them (an older parent): the world alone.
  json old = worker_config_to_json(sample_config());
  for (const char* key : {"comms", "node", "nodes", "local_ranks"}) old.erase(key);
  Result<WorkerConfig> world = worker_config_from_json(old);
  ASSERT_TRUE(world.ok()) << world.error();
  EXPECT_EQ(world->comms, std::vector<std::string>{"world"});

  json unknown = worker_config_to_json(c);
  unknown["comms"] = {"world", "pod"};
  Result<WorkerConfig> refused = worker_config_from_json(unknown);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("'pod'"), std::string::npos) << refused.error();
  json none = worker_config_to_json(c);
  none["comms"] = json::array();
  EXPECT_FALSE(worker_config_from_json(none).ok());
  // Nodes of different sizes cannot split into rails: 16 ranks are not 3 nodes x 8.
  json uneven = worker_config_to_json(c);
  uneven["nodes"] = 3;
  Result<WorkerConfig> layout = worker_config_from_json(uneven);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.error().find("same number of ranks"), std::string::npos) << layout.error();
  // ... which the world alone does not need.
  uneven["comms"] = {"world"};
  EXPECT_TRUE(worker_config_from_json(uneven).ok());

  WorkerEvent size;
  size.kind = WorkerEvent::Kind::size;
  size.op = "all_reduce";
  size.size.bytes = size.size.count = 1024;
  EXPECT_EQ(encode_event(size).find("comm"), std::string::npos) << "the world's events stay as they were";
  EXPECT_EQ(round_trip(size).comm, "world");
  size.comm = "rail";
  EXPECT_NE(encode_event(size).find(R"("comm":"rail")"), std::string::npos) << encode_event(size);
  EXPECT_EQ(round_trip(size).comm, "rail");
  size.comm = "node";
  EXPECT_EQ(round_trip(size).comm, "node");
  EXPECT_FALSE(
      decode_event(R"({"event":"size","op":"all_reduce","bytes":8,"count":2,"oop_us":1,"comm":"pod"})").ok());

  WorkerEvent done;
  done.kind = WorkerEvent::Kind::done;
  done.communicators = 3;
  EXPECT_EQ(encode_event(done), R"({"communicators":3,"event":"done"})");
  EXPECT_EQ(round_trip(done).communicators, 3);
  EXPECT_EQ(decode_event(R"({"event":"done"})")->communicators, 0);
}
