// An NcclInfoLog as nccltune/nccl-log/v1 (nccl_info_log_to_json).
#include "collectives/nccl_info_log.h"

#include <optional>

#include "collectives/nccl_info_mnnvl.h"

namespace nccltune {
namespace {

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json nccl_info_log_to_json(const NcclInfoLog& log) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const NcclNetDevice& d : log.devices)
    devices.push_back({{"name", d.name},
                       {"port", or_null(d.port)},
                       {"link_layer", or_null(d.link_layer)},
                       {"sharp", d.sharp}});
  nlohmann::ordered_json choices = nlohmann::ordered_json::array();
  for (const NcclLoggedChoice& c : log.choices)
    choices.push_back({{"op", or_null(c.op)}, {"bytes", c.bytes}, {"algo", c.algo}, {"proto", c.proto}});
  nlohmann::ordered_json kernel_choices = nlohmann::ordered_json::array();
  for (const NcclKernelChoice& c : log.kernel_choices)
    kernel_choices.push_back({{"op", c.op},
                              {"bytes", c.bytes},
                              {"path", c.path},
                              {"kernel", c.kernel},
                              {"channels", or_null(c.channels)},
                              {"threads", or_null(c.threads)},
                              {"works", or_null(c.works)},
                              {"nvls_sync", c.nvls_sync}});
  nlohmann::ordered_json fabrics = nlohmann::ordered_json::array();
  for (const NcclMnnvlFabric& f : log.mnnvl_fabrics)
    fabrics.push_back({{"fabric_uuid", f.fabric_uuid},
                       {"clique_id", f.clique_id},
                       {"state", f.state},
                       {"state_name", mnnvl_state_name(f.state)},
                       {"health_mask", f.health_mask},
                       {"health_problems", mnnvl_health_problems(f.health_mask)},
                       {"lines", f.lines},
                       {"first", {{"source", f.first.source}, {"line", f.first.line}}}});
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (const NcclModelTable& t : log.model_tables) {
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    for (const NcclModelCell& c : t.cells)
      cells.push_back({{"op", c.op},
                       {"algo", c.algo},
                       {"proto", c.proto},
                       {"enabled", c.algbw > 0},
                       {"latency_us", c.latency_us},
                       {"algbw", c.algbw},
                       {"busbw", or_null(model_busbw(c, t.ranks))},
                       {"max_threads", or_null(c.max_threads)}});
    tables.push_back({{"ranks", or_null(t.ranks)}, {"cells", std::move(cells)}});
  }
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const NcclLogLine& w : log.warnings)
    warnings.push_back({{"source", w.source}, {"line", w.line}, {"text", w.text}});
  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  for (const auto& [name, value] : log.env) env[name] = value;
  nlohmann::ordered_json plugin_env = nlohmann::ordered_json::object();
  for (const auto& [name, value] : log.plugin_env) plugin_env[name] = value;
  nlohmann::ordered_json gdr_causes = nlohmann::ordered_json::array();
  for (const NcclLogLine& c : log.gdr_causes)
    gdr_causes.push_back({{"source", c.source}, {"line", c.line}, {"text", c.text}});
  return {{"schema", "nccltune/nccl-log/v1"},
          {"nccl_version", or_null(log.nccl_version)},
          {"cuda_version", or_null(log.cuda_version)},
          {"ranks", or_null(log.ranks)},
          {"nodes", or_null(log.nodes)},
          {"local_ranks", or_null(log.local_ranks)},
          {"hosts", log.hosts},
          {"network",
           {{"plugin", or_null(log.net_plugin)},
            {"transport", or_null(log.transport)},
            {"plugin_library", or_null(log.plugin_library)},
            {"devices", std::move(devices)},
            {"plugin_requested", or_null(log.net_plugin_requested)},
            {"plugin_env", std::move(plugin_env)},
            {"plugin_proto_reason", or_null(log.plugin_proto_reason)}}},
          {"gdr",
           {{"connections", log.net_connections},
            {"with_gdr", log.gdr_connections},
            {"causes", std::move(gdr_causes)}}},
          {"nvls",
           {{"available", or_null(log.nvls_available)},
            {"channels", or_null(log.nvls_channels)},
            {"enabled", or_null(nvls_enabled(log))}}},
          {"mnnvl", or_null(log.mnnvl)},
          {"mnnvl_fabric",
           {{"clique_size", or_null(log.mnnvl_clique_size)},
            {"nvl_domain_size", or_null(log.mnnvl_nvl_domain_size)},
            {"clique_ranks", log.mnnvl_clique_ranks},
            {"fabrics", std::move(fabrics)}}},
          {"channels",
           {{"coll", or_null(log.coll_channels)},
            {"nvls", or_null(log.nvls_channels)},
            {"collnet", or_null(log.collnet_channels)}}},
          {"env", std::move(env)},
          {"tuner",
           {{"loaded", or_null(log.tuner_loaded)},
            {"fallback", or_null(log.tuner_fallback)},
            {"requested", or_null(log.tuner_requested)},
            {"library_from_env", or_null(log.tuner_library_from_env)},
            {"not_found", log.tuner_not_found},
            {"declined", or_null(log.tuner_declined)},
            {"initialized", log.tuner_initialized},
            {"in_effect", or_null(tuner_in_effect(log))}}},
          {"choices", std::move(choices)},
          {"kernel_choices", std::move(kernel_choices)},
          {"tuning_tables", std::move(tables)},
          {"warnings", std::move(warnings)},
          {"warnings_dropped", log.warnings_dropped},
          {"cuda_driver", or_null(log.cuda_driver)},
          {"info_lines", log.info_lines}};
}

}  // namespace nccltune
