#include "collectives/worker_protocol.h"

#include "base/json_optional.h"

namespace nccltune {

using nlohmann::json;

namespace {

template <class T>
std::optional<T> optional_from(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

}  // namespace

bool known_comm(const std::string& name) {
  return name == "world" || name == "rail" || name == "node";
}

std::pair<int, int> comm_rank_and_size(const WorkerConfig& c, const std::string& comm) {
  if (comm == "rail") return {c.node, c.nodes};
  if (comm == "node") return {c.device, c.local_ranks};
  return {c.rank, c.nranks};
}

json worker_config_to_json(const WorkerConfig& c) {
  json pairs = json::array();
  for (const ForcedPair& p : c.pairs)
    pairs.push_back(
        {{"algo", p.algo}, {"proto", p.proto}, {"algorithm", p.algorithm}, {"protocol", p.protocol}});
  return {{"cmd", "start"},
          {"pairs", pairs},
          {"tuner_plugin", c.tuner_plugin},
          {"count_service", c.count_service},
          {"rank", c.rank},
          {"nranks", c.nranks},
          {"device", c.device},
          {"cuda_lib", c.cuda_lib},
          {"nccl_lib", c.nccl_lib},
          {"collectives", c.collectives},
          {"min_bytes", c.sweep.min_bytes},
          {"max_bytes", c.sweep.max_bytes},
          {"step_factor", c.sweep.step_factor},
          {"step_bytes", c.sweep.step_bytes},
          {"iterations", c.sweep.iterations},
          {"warmup", c.sweep.warmup},
          {"check", c.sweep.check},
          {"op", std::string(to_string(c.sweep.op))},
          {"type", std::string(to_string(c.sweep.type))},
          {"root", c.sweep.root},
          {"in_place", c.sweep.in_place},
          {"max_bytes_per_size", c.sweep.max_bytes_per_size},
          {"sizes", c.sweep.sizes},
          {"comms", c.comms},
          {"node", c.node},
          {"nodes", c.nodes},
          {"local_ranks", c.local_ranks}};
}

Result<WorkerConfig> worker_config_from_json(const json& j) {
  try {
    WorkerConfig c;
    c.rank = j.at("rank").get<int>();
    c.nranks = j.at("nranks").get<int>();
    c.device = j.at("device").get<int>();
    c.cuda_lib = j.at("cuda_lib").get<std::string>();
    c.nccl_lib = j.at("nccl_lib").get<std::string>();
    c.collectives = j.at("collectives").get<std::vector<std::string>>();
    if (c.collectives.empty()) return Error{"worker config: no collective to measure"};
    c.sweep.min_bytes = j.at("min_bytes").get<std::size_t>();
    c.sweep.max_bytes = j.at("max_bytes").get<std::size_t>();
    c.sweep.step_factor = j.at("step_factor").get<double>();
    c.sweep.step_bytes = j.at("step_bytes").get<std::size_t>();
    c.sweep.iterations = j.at("iterations").get<int>();
    c.sweep.warmup = j.at("warmup").get<int>();
    c.sweep.check = j.at("check").get<bool>();
    c.sweep.root = j.at("root").get<int>();
    c.sweep.in_place = j.value("in_place", true);
    c.sweep.max_bytes_per_size = j.value("max_bytes_per_size", std::size_t{0});
    c.sweep.sizes = j.value("sizes", std::vector<std::size_t>{});
    if (j.contains("pairs"))
      for (const json& p : j.at("pairs"))
        c.pairs.push_back({p.at("algo").get<std::string>(), p.at("proto").get<std::string>(),
                           p.at("algorithm").get<int>(), p.at("protocol").get<int>()});
    c.tuner_plugin = j.value("tuner_plugin", std::string());
    c.count_service = j.value("count_service", false);
    if ((!c.pairs.empty() || c.count_service) && c.tuner_plugin.empty())
      return Error{"worker config: pairs or count_service without a tuner_plugin"};
    if (j.contains("comms")) c.comms = j.at("comms").get<std::vector<std::string>>();
    if (c.comms.empty()) return Error{"worker config: no communicator to measure on"};
    bool split = false;
    for (const std::string& comm : c.comms) {
      if (!known_comm(comm))
        return Error{"worker config: unknown communicator '" + comm + "' (known: world, rail, node)"};
      split = split || comm != "world";
    }
    c.node = j.value("node", 0);
    c.nodes = j.value("nodes", 1);
    c.local_ranks = j.value("local_ranks", c.nranks);
    if (split && (c.nodes < 1 || c.local_ranks < 1 || c.nodes * c.local_ranks != c.nranks || c.node < 0 ||
                  c.node >= c.nodes || c.device < 0 || c.device >= c.local_ranks))
      return Error{
          "worker config: rail and node communicators need every node to hold the same number of "
          "ranks (" +
          std::to_string(c.nranks) + " ranks are not " + std::to_string(c.nodes) + " nodes x " +
          std::to_string(c.local_ranks) + ", or node " + std::to_string(c.node) + " / local rank " +
          std::to_string(c.device) + " is outside them)"};
    auto op = parse_reduction_op(j.at("op").get<std::string>());
    if (!op) return Error{op.error()};
    c.sweep.op = *op;
    auto type = parse_data_type(j.at("type").get<std::string>());
    if (!type) return Error{type.error()};
    c.sweep.type = *type;
    return c;
  } catch (const json::exception& e) {
    return Error{std::string("worker config: ") + e.what()};
  }
}

std::string encode_event(const WorkerEvent& e) {
  json j;
  switch (e.kind) {
    case WorkerEvent::Kind::loaded:
      j = {{"event", "loaded"},
           {"nccl_version", e.nccl_version},
           {"cuda_driver", e.cuda_driver},
           {"device", {{"name", e.device.name}, {"pci", e.device.pci}, {"sm", e.device.sm}}}};
      break;
    case WorkerEvent::Kind::unique_id: j = {{"event", "unique_id"}, {"id", e.id_hex}}; break;
    case WorkerEvent::Kind::ready: j = {{"event", "ready"}}; break;
    case WorkerEvent::Kind::size:
      j = {{"event", "size"},
           {"op", e.op},
           {"bytes", e.size.bytes},
           {"count", e.size.count},
           {"oop_us", e.size.out_of_place_us},
           {"ip_us", optional_to_json<json>(e.size.in_place_us)},
           {"oop_wrong", optional_to_json<json>(e.size.out_of_place_wrong)},
           {"ip_wrong", optional_to_json<json>(e.size.in_place_wrong)}};
      if (e.pair >= 0) {
        j["pair"] = e.pair;
        j["unavailable"] = e.unavailable;
      }
      if (e.service) {
        j["served"] = e.service->served;
        j["declined"] = e.service->declined;
        j["declined_why"] = e.service->declined_why;
      }
      if (e.comm != "world") j["comm"] = e.comm;
      break;
    case WorkerEvent::Kind::done:
      j = {{"event", "done"}};
      if (e.communicators > 0) j["communicators"] = e.communicators;
      break;
    case WorkerEvent::Kind::error:
      j = {{"event", "error"}, {"stage", e.stage}, {"message", e.message}};
      break;
  }
  // Messages and reasons may hold paths, which need not be UTF-8.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<WorkerEvent> decode_event(const std::string& line) {
  try {
    const json j = json::parse(line);
    const std::string kind = j.at("event").get<std::string>();
    WorkerEvent e;
    if (kind == "loaded") {
      e.kind = WorkerEvent::Kind::loaded;
      e.nccl_version = j.at("nccl_version").get<int>();
      e.cuda_driver = j.at("cuda_driver").get<int>();
      e.device.name = j.at("device").at("name").get<std::string>();
      e.device.pci = j.at("device").at("pci").get<std::string>();
      e.device.sm = j.at("device").value("sm", 0);
    } else if (kind == "unique_id") {
      e.kind = WorkerEvent::Kind::unique_id;
      e.id_hex = j.at("id").get<std::string>();
    } else if (kind == "ready") {
      e.kind = WorkerEvent::Kind::ready;
    } else if (kind == "size") {
      e.kind = WorkerEvent::Kind::size;
      e.op = j.at("op").get<std::string>();
      e.size.bytes = j.at("bytes").get<std::size_t>();
      e.size.count = j.at("count").get<std::size_t>();
      e.size.out_of_place_us = j.at("oop_us").get<double>();
      e.size.in_place_us = optional_from<double>(j, "ip_us");
      e.size.out_of_place_wrong = optional_from<int64_t>(j, "oop_wrong");
      e.size.in_place_wrong = optional_from<int64_t>(j, "ip_wrong");
      e.pair = j.value("pair", -1);
      e.unavailable = j.value("unavailable", false);
      if (j.contains("served"))
        e.service = PluginService{j.at("served").get<std::uint64_t>(), j.at("declined").get<std::uint64_t>(),
                                  j.at("declined_why").get<std::string>()};
      e.comm = j.value("comm", std::string("world"));
      if (!known_comm(e.comm)) return Error{"worker sent a size of an unknown communicator '" + e.comm + "'"};
    } else if (kind == "done") {
      e.kind = WorkerEvent::Kind::done;
      e.communicators = j.value("communicators", 0);
    } else if (kind == "error") {
      e.kind = WorkerEvent::Kind::error;
      e.stage = j.at("stage").get<std::string>();
      e.message = j.at("message").get<std::string>();
    } else {
      return Error{"worker sent an unknown event '" + kind + "'"};
    }
    return e;
  } catch (const json::exception& ex) {
    return Error{std::string("worker sent a malformed line: ") + ex.what()};
  }
}

std::string bytes_to_hex(const void* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string hex;
  hex.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

bool hex_to_bytes(const std::string& hex, void* out, std::size_t size) {
  if (hex.size() != size * 2) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  auto* bytes = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < size; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

}  // namespace nccltune
