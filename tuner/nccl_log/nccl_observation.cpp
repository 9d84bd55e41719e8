#include "nccl_log/nccl_observation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "profile/nccl_names.h"

namespace nccltune {

NcclObservation observation_from_log(const NcclInfoLog& log) {
  NcclObservation o;
  o.nccl_version = log.nccl_version.value_or("");
  o.transport = log.transport.value_or("");
  o.net_plugin = log.net_plugin.value_or("");
  for (const NcclNetDevice& device : log.devices)
    o.hcas.push_back(device.port ? device.name + ":" + std::to_string(*device.port) : device.name);
  // A log without any connection line says nothing about GDR (a single node, or NET not logged).
  if (log.net_connections > 0) {
    o.connections = log.net_connections;
    o.gdr_connections = log.gdr_connections;
  }
  o.nvls_available = log.nvls_available;
  o.nvls_channels = log.nvls_channels;
  o.coll_channels = log.coll_channels;
  o.tuner = log.tuner_loaded ? *log.tuner_loaded : (log.tuner_fallback ? "internal" : "");
  for (const NcclLoggedChoice& c : log.choices)
    if (c.bytes >= 0)
      o.choices.push_back({c.op.value_or(""), static_cast<std::uint64_t>(c.bytes), c.algo, c.proto});
  return o;
}

std::vector<std::optional<NcclChoice>> logged_choices_at(const NcclInfoLog& log,
                                                         const std::vector<std::string>& ops,
                                                         const std::vector<std::uint64_t>& sizes) {
  std::vector<std::optional<NcclChoice>> out(sizes.size());
  for (const NcclLoggedChoice& c : log.choices) {
    const std::optional<int> algo = nccl_algorithm_index(nccl_name_from_log(c.algo));
    const std::optional<int> proto = nccl_protocol_index(c.proto);
    if (c.bytes < 0 || !algo || !proto) continue;
    for (std::size_t i = 0; i < sizes.size() && i < ops.size(); ++i) {
      if (sizes[i] != static_cast<std::uint64_t>(c.bytes)) continue;
      if (c.op && *c.op != nccl_log_op_name(ops[i]).value_or("")) continue;
      out[i] = NcclChoice{std::string(nccl_algorithm_name(*algo)), std::string(nccl_protocol_name(*proto))};
    }
  }
  return out;
}

NcclInfoLog one_choice_per_size(NcclInfoLog log) {
  std::map<std::pair<std::optional<std::string>, int64_t>, int> pairs;  // by (op, bytes)
  for (const NcclLoggedChoice& c : log.choices) ++pairs[{c.op, c.bytes}];
  std::erase_if(log.choices, [&](const NcclLoggedChoice& c) { return pairs[{c.op, c.bytes}] > 1; });
  return log;
}

namespace {

double rounded_to(double value, double parts) {
  return std::round(value * parts) / parts;
}

}  // namespace

std::map<std::string, std::vector<ModelPair>> nccl_model_of(const NcclModelTable& table,
                                                            const std::vector<std::string>& ops) {
  std::map<std::string, std::vector<ModelPair>> model;
  for (const std::string& op : ops) {
    const std::optional<std::string_view> logged = nccl_log_op_name(op);
    if (!logged) continue;
    std::vector<ModelPair> pairs;
    for (const NcclModelCell& cell : table.cells) {
      if (cell.op != *logged || !(cell.algbw > 0) || pairs.size() >= kMaxModelPairs) continue;
      const std::optional<double> busbw = model_busbw(cell, table.ranks);
      pairs.push_back({cell.algo, cell.proto, rounded_to(cell.latency_us, 10),
                       busbw ? std::optional<double>(rounded_to(*busbw, 100)) : std::nullopt});
    }
    if (!pairs.empty()) model[op] = std::move(pairs);
  }
  return model;
}

std::vector<ObservedVerdict> observed_verdicts(const std::vector<LogVerdict>& verdicts) {
  std::vector<ObservedVerdict> out;
  for (const LogVerdict& v : verdicts) out.push_back({std::string(to_string(v.level)), v.check, v.message});
  return out;
}

}  // namespace nccltune
