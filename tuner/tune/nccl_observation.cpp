#include "tune/nccl_observation.h"

#include <string>

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

std::vector<ObservedVerdict> observed_verdicts(const std::vector<LogVerdict>& verdicts) {
  std::vector<ObservedVerdict> out;
  for (const LogVerdict& v : verdicts) out.push_back({std::string(to_string(v.level)), v.check, v.message});
  return out;
}

}  // namespace nccltune
