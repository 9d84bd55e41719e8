#include "daemon/node_env.h"

#include <unistd.h>

#include "node/env_format.h"
#include "node/profile_for_job.h"

namespace nccltune {

Result<NodeEnv> resolve_node_env(const EnvConfig& config, const std::string& node_type_key) {
  // As `nccltune env`: whoever could write the store would otherwise set NCCL_* for every job here.
  auto loaded = find_profile_for_job(config.store, node_type_key, JobShape{1, std::nullopt},
                                     config.prefer_below, ::geteuid());
  if (!loaded) return Error{loaded.error()};
  NodeEnv env;
  env.observed = newest_observed_network(config.store, node_type_key, ::geteuid(), env.warnings);
  // Comments carry only the key (validated [A-Za-z0-9._-]) and store paths the admin configured;
  // a newline in them could still start a line, so they are cut at the first one.
  const auto one_line = [](std::string text) { return text.substr(0, text.find('\n')); };
  if (!loaded->profile()) {
    env.environment_file =
        one_line("# nccltuned: no profile for " + node_type_key + " in " + config.store.string()) + "\n";
    return env;
  }
  const StoreProfile& found = *loaded->stored;
  env.profile = ActiveProfile{found.match.file, found.profile.shape.node_type_key, found.profile.shape.nodes,
                              found.profile.provenance.date};
  EnvEmission systemd = render_env(found.profile, EnvFormat::systemd, config.allow_names);
  EnvEmission nccl_conf = render_env(found.profile, EnvFormat::nccl_conf, config.allow_names);
  env.warnings = std::move(systemd.warnings);
  env.environment_file = one_line("# nccltuned: " + found.match.file.string() + " (tuned for " +
                                  std::to_string(found.match.tuned_nodes) + " nodes)") +
                         "\n" + systemd.text;
  env.nccl_conf_body = std::move(nccl_conf.text);
  return env;
}

}  // namespace nccltune
