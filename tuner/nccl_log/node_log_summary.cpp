#include "nccl_log/node_log_summary.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <tuple>

#include "base/json_optional.h"

namespace nccltune {

namespace {

using nlohmann::json;

template <class T>
std::optional<T> optional_from(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

json line_to_json(const NcclLogLine& line) {
  return {{"source", line.source}, {"line", line.line}, {"text", line.text}};
}

NcclLogLine line_from_json(const json& j) {
  return {j.at("source").get<std::string>(), j.at("line").get<int>(), j.at("text").get<std::string>()};
}

}  // namespace

std::string node_log_summary_to_json(const NcclInfoLog& log) {
  json devices = json::array();
  for (const NcclNetDevice& d : log.devices)
    devices.push_back({{"name", d.name},
                       {"port", optional_to_json<json>(d.port)},
                       {"link_layer", optional_to_json<json>(d.link_layer)},
                       {"sharp", d.sharp}});
  json choices = json::array();
  for (const NcclLoggedChoice& c : log.choices)
    choices.push_back(
        {{"op", optional_to_json<json>(c.op)}, {"bytes", c.bytes}, {"algo", c.algo}, {"proto", c.proto}});
  json kernel_choices = json::array();
  for (const NcclKernelChoice& c : log.kernel_choices)
    kernel_choices.push_back({{"op", c.op},
                              {"bytes", c.bytes},
                              {"path", c.path},
                              {"kernel", c.kernel},
                              {"channels", optional_to_json<json>(c.channels)},
                              {"threads", optional_to_json<json>(c.threads)},
                              {"works", optional_to_json<json>(c.works)},
                              {"nvls_sync", c.nvls_sync}});
  json fabrics = json::array();
  for (const NcclMnnvlFabric& f : log.mnnvl_fabrics)
    fabrics.push_back({{"fabric_uuid", f.fabric_uuid},
                       {"clique_id", f.clique_id},
                       {"state", f.state},
                       {"health_mask", f.health_mask},
                       {"lines", f.lines},
                       {"first", line_to_json(f.first)}});
  json tables = json::array();
  for (const NcclModelTable& t : log.model_tables) {
    json cells = json::array();
    for (const NcclModelCell& c : t.cells)
      cells.push_back({{"op", c.op},
                       {"algo", c.algo},
                       {"proto", c.proto},
                       {"latency_us", c.latency_us},
                       {"algbw", c.algbw},
                       {"max_threads", optional_to_json<json>(c.max_threads)}});
    tables.push_back({{"ranks", optional_to_json<json>(t.ranks)}, {"cells", std::move(cells)}});
  }
  json warnings = json::array();
  for (const NcclLogLine& w : log.warnings) warnings.push_back(line_to_json(w));
  json gdr_causes = json::array();
  for (const NcclLogLine& c : log.gdr_causes) gdr_causes.push_back(line_to_json(c));
  json failures = json::array();
  for (const NcclFailure& f : log.failures)
    failures.push_back({{"kind", static_cast<int>(f.kind)},
                        {"status", optional_to_json<json>(f.status)},
                        {"where", line_to_json(f.where)}});
  return json{{"nccl_version", optional_to_json<json>(log.nccl_version)},
              {"cuda_version", optional_to_json<json>(log.cuda_version)},
              {"ranks", optional_to_json<json>(log.ranks)},
              {"nodes", optional_to_json<json>(log.nodes)},
              {"local_ranks", optional_to_json<json>(log.local_ranks)},
              {"hosts", log.hosts},
              {"net_plugin", optional_to_json<json>(log.net_plugin)},
              {"net_plugin_in_use", log.net_plugin_in_use},
              {"connection_network", optional_to_json<json>(log.connection_network)},
              {"plugin_library", optional_to_json<json>(log.plugin_library)},
              {"devices", std::move(devices)},
              {"ib_devices_listed", log.ib_devices_listed},
              {"ofi_lines", log.ofi_lines},
              {"net_connections", log.net_connections},
              {"gdr_connections", log.gdr_connections},
              {"nvls_available", optional_to_json<json>(log.nvls_available)},
              {"nvls_channels", optional_to_json<json>(log.nvls_channels)},
              {"mnnvl", optional_to_json<json>(log.mnnvl)},
              {"mnnvl_fabrics", std::move(fabrics)},
              {"mnnvl_clique_size", optional_to_json<json>(log.mnnvl_clique_size)},
              {"mnnvl_nvl_domain_size", optional_to_json<json>(log.mnnvl_nvl_domain_size)},
              {"mnnvl_clique_ranks", log.mnnvl_clique_ranks},
              {"coll_channels", optional_to_json<json>(log.coll_channels)},
              {"collnet_channels", optional_to_json<json>(log.collnet_channels)},
              {"env", log.env},
              {"tuner_loaded", optional_to_json<json>(log.tuner_loaded)},
              {"tuner_fallback", optional_to_json<json>(log.tuner_fallback)},
              {"tuner_requested", optional_to_json<json>(log.tuner_requested)},
              {"tuner_symbol_missing", log.tuner_symbol_missing},
              {"choices", std::move(choices)},
              {"kernel_choices", std::move(kernel_choices)},
              {"model_tables", std::move(tables)},
              {"warnings", std::move(warnings)},
              {"warnings_dropped", log.warnings_dropped},
              {"failures", std::move(failures)},
              {"nccl_lines", log.nccl_lines},
              {"cuda_driver", optional_to_json<json>(log.cuda_driver)},
              {"net_plugin_requested", optional_to_json<json>(log.net_plugin_requested)},
              {"plugin_env", log.plugin_env},
              {"plugin_proto_reason", optional_to_json<json>(log.plugin_proto_reason)},
              {"gdr_causes", std::move(gdr_causes)},
              {"nvls_in_enabled_matrix", optional_to_json<json>(log.nvls_in_enabled_matrix)},
              {"tuner_library_from_env", optional_to_json<json>(log.tuner_library_from_env)},
              {"tuner_not_found", log.tuner_not_found},
              {"tuner_declined", optional_to_json<json>(log.tuner_declined)},
              {"tuner_initialized", log.tuner_initialized},
              {"info_lines", log.info_lines}}
      .dump();
}

Result<NcclInfoLog> node_log_summary_from_json(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"a node's NCCL log summary is not a JSON object"};
  try {
    NcclInfoLog log;
    log.nccl_version = optional_from<std::string>(j, "nccl_version");
    log.cuda_version = optional_from<std::string>(j, "cuda_version");
    log.ranks = optional_from<int>(j, "ranks");
    log.nodes = optional_from<int>(j, "nodes");
    log.local_ranks = optional_from<int>(j, "local_ranks");
    log.hosts = j.at("hosts").get<std::vector<std::string>>();
    log.net_plugin = optional_from<std::string>(j, "net_plugin");
    log.net_plugin_in_use = j.at("net_plugin_in_use").get<bool>();
    log.connection_network = optional_from<std::string>(j, "connection_network");
    log.plugin_library = optional_from<std::string>(j, "plugin_library");
    for (const json& d : j.at("devices"))
      log.devices.push_back({d.at("name").get<std::string>(), optional_from<int>(d, "port"),
                             optional_from<std::string>(d, "link_layer"), d.at("sharp").get<bool>()});
    log.ib_devices_listed = j.at("ib_devices_listed").get<bool>();
    log.ofi_lines = j.at("ofi_lines").get<bool>();
    log.net_connections = j.at("net_connections").get<int>();
    log.gdr_connections = j.at("gdr_connections").get<int>();
    log.nvls_available = optional_from<bool>(j, "nvls_available");
    log.nvls_channels = optional_from<int>(j, "nvls_channels");
    log.mnnvl = optional_from<bool>(j, "mnnvl");
    for (const json& f : j.at("mnnvl_fabrics"))
      log.mnnvl_fabrics.push_back({f.at("fabric_uuid").get<std::string>(),
                                   f.at("clique_id").get<std::uint32_t>(), f.at("state").get<int>(),
                                   f.at("health_mask").get<std::uint32_t>(), f.at("lines").get<int>(),
                                   line_from_json(f.at("first"))});
    log.mnnvl_clique_size = optional_from<int>(j, "mnnvl_clique_size");
    log.mnnvl_nvl_domain_size = optional_from<int>(j, "mnnvl_nvl_domain_size");
    log.mnnvl_clique_ranks = j.at("mnnvl_clique_ranks").get<std::vector<int>>();
    log.coll_channels = optional_from<int>(j, "coll_channels");
    log.collnet_channels = optional_from<int>(j, "collnet_channels");
    log.env = j.at("env").get<std::map<std::string, std::string>>();
    log.tuner_loaded = optional_from<std::string>(j, "tuner_loaded");
    log.tuner_fallback = optional_from<std::string>(j, "tuner_fallback");
    log.tuner_requested = optional_from<std::string>(j, "tuner_requested");
    log.tuner_symbol_missing = j.at("tuner_symbol_missing").get<bool>();
    for (const json& c : j.at("choices"))
      log.choices.push_back({optional_from<std::string>(c, "op"), c.at("bytes").get<int64_t>(),
                             c.at("algo").get<std::string>(), c.at("proto").get<std::string>()});
    for (const json& c : j.at("kernel_choices"))
      log.kernel_choices.push_back({c.at("op").get<std::string>(), c.at("bytes").get<int64_t>(),
                                    c.at("path").get<std::string>(), c.at("kernel").get<std::string>(),
                                    optional_from<int>(c, "channels"), optional_from<int>(c, "threads"),
                                    optional_from<int>(c, "works"), c.at("nvls_sync").get<bool>()});
    for (const json& t : j.at("model_tables")) {
      NcclModelTable table{optional_from<int>(t, "ranks"), {}};
      for (const json& c : t.at("cells"))
        table.cells.push_back({c.at("op").get<std::string>(), c.at("algo").get<std::string>(),
                               c.at("proto").get<std::string>(), c.at("latency_us").get<double>(),
                               c.at("algbw").get<double>(), optional_from<int>(c, "max_threads")});
      log.model_tables.push_back(std::move(table));
    }
    for (const json& w : j.at("warnings")) log.warnings.push_back(line_from_json(w));
    log.warnings_dropped = j.at("warnings_dropped").get<int>();
    for (const json& f : j.at("failures")) {
      const int kind = f.at("kind").get<int>();
      if (kind < 0 || kind > static_cast<int>(NcclFailureKind::timeout))
        return Error{"a node's NCCL log summary has an unknown failure kind " + std::to_string(kind)};
      log.failures.push_back({static_cast<NcclFailureKind>(kind), optional_from<int>(f, "status"),
                              line_from_json(f.at("where"))});
    }
    log.nccl_lines = j.at("nccl_lines").get<int>();
    // Read leniently: a node that runs an nccltune from before these fields sends none of them.
    log.cuda_driver = optional_from<std::string>(j, "cuda_driver");
    log.net_plugin_requested = optional_from<std::string>(j, "net_plugin_requested");
    log.plugin_env = j.value("plugin_env", std::map<std::string, std::string>());
    log.plugin_proto_reason = optional_from<std::string>(j, "plugin_proto_reason");
    if (const auto causes = j.find("gdr_causes"); causes != j.end())
      for (const json& c : *causes) log.gdr_causes.push_back(line_from_json(c));
    log.nvls_in_enabled_matrix = optional_from<bool>(j, "nvls_in_enabled_matrix");
    log.tuner_library_from_env = optional_from<std::string>(j, "tuner_library_from_env");
    log.tuner_not_found = j.value("tuner_not_found", false);
    log.tuner_declined = optional_from<std::string>(j, "tuner_declined");
    log.tuner_initialized = j.value("tuner_initialized", false);
    log.info_lines = j.value("info_lines", 0);
    return log;
  } catch (const json::exception& e) {
    return Error{std::string("a node's NCCL log summary: ") + e.what()};
  }
}

std::string node_log_summaries_to_json(const std::vector<NcclInfoLog>& logs) {
  std::string out = "[";
  for (const NcclInfoLog& log : logs) out += (out.size() > 1 ? "," : "") + node_log_summary_to_json(log);
  return out + "]";
}

Result<std::vector<NcclInfoLog>> node_log_summaries_from_json(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return Error{"a node's NCCL log summaries are not a JSON array"};
  std::vector<NcclInfoLog> logs;
  for (const json& one : j) {
    Result<NcclInfoLog> log = node_log_summary_from_json(one.dump());
    if (!log) return Error{log.error()};
    logs.push_back(std::move(*log));
  }
  return logs;
}

namespace {

// The message of an INFO line: what follows "NCCL INFO " (the whole line when it has no prefix).
std::string_view info_body(std::string_view line) {
  const std::size_t at = line.find("NCCL INFO ");
  return at == std::string_view::npos ? line : line.substr(at + 10);
}

bool starts_init(std::string_view body) {
  return body.find("Init START") != std::string_view::npos &&
         (body.starts_with("ncclCommInitRank") || body.starts_with("ncclCommSplit") ||
          body.find(" comm 0x") != std::string_view::npos);
}

bool is_comm_line(std::string_view body) {
  return body.starts_with("comm 0x") && body.find(" nRanks ") != std::string_view::npos;
}

bool is_call_choice(std::string_view body) {
  return body.find(" Bytes -> Algo ") != std::string_view::npos;
}

}  // namespace

std::vector<std::string> communicator_parts(std::string_view text) {
  const bool by_init = text.find("Init START") != std::string_view::npos;
  std::vector<std::string> parts;
  std::string preamble, calls;  // the process's lines before its first communicator; its calls' lines
  std::vector<std::string> open;  // this process's communicators
  const auto finish_process = [&] {
    if (open.empty()) {
      // Text before any file or process (a fixture's comments) makes no part of its own.
      const std::string part = preamble + calls;
      if (part.find("NCCL INFO") != std::string::npos || part.find("NCCL WARN") != std::string::npos)
        parts.push_back(part);
    } else {
      open.front() += calls;
      for (std::string& part : open) parts.push_back(preamble + part);
    }
    preamble.clear();
    calls.clear();
    open.clear();
  };
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.starts_with("# file ")) finish_process();
    const std::string_view body = info_body(line);
    if (by_init ? starts_init(body) : is_comm_line(body)) open.emplace_back();
    std::string& into = is_call_choice(body) ? calls : open.empty() ? preamble : open.back();
    into.append(line).push_back('\n');
  }
  finish_process();
  return parts;
}

std::vector<NcclInfoLog> node_logs_by_communicator(
    const std::vector<std::pair<std::string, std::string>>& texts) {
  using Key = std::tuple<int, int, int>;  // ranks, nodes, ranks per node
  std::map<Key, NcclInfoLogReader> shapes;
  NcclInfoLogReader unnamed;
  for (const auto& [source, text] : texts) {
    for (const std::string& part : communicator_parts(text)) {
      const NcclInfoLog log = parse_nccl_info_log(part, source);
      if (log.ranks)
        shapes[Key{*log.ranks, log.nodes.value_or(0), log.local_ranks.value_or(0)}].add(log);
      else
        unnamed.add(log);
    }
  }
  std::vector<NcclInfoLog> out;
  for (auto it = shapes.rbegin(); it != shapes.rend(); ++it) {
    if (out.empty()) it->second.add(unnamed.result());  // the largest: the world
    out.push_back(it->second.result());
  }
  if (out.empty()) out.push_back(unnamed.result());
  return out;
}

}  // namespace nccltune
