#include "node_env.h"

#include <unistd.h>

#include "env_format.h"
#include "profile.h"
#include "profile_store.h"
#include "store_permissions.h"

namespace nccltune {

Result<NodeEnv> resolve_node_env(const EnvConfig& config, const std::string& node_type_key) {
  auto match = find_profile(config.store, node_type_key, 1, config.prefer_below);
  if (!match) return Error{match.error()};
  NodeEnv env;
  // Comments carry only the key (validated [A-Za-z0-9._-]) and store paths the admin configured;
  // a newline in them could still start a line, so they are cut at the first one.
  const auto one_line = [](std::string text) { return text.substr(0, text.find('\n')); };
  if (!*match) {
    env.environment_file =
        one_line("# nccltuned: no profile for " + node_type_key + " in " + config.store.string()) + "\n";
    return env;
  }
  // As `nccltune env`: whoever could write the store would otherwise set NCCL_* for every job here.
  auto trusted = trusted_profile_path(config.store, (*match)->file, ::geteuid());
  if (!trusted) return Error{trusted.error()};
  auto profile = read_profile(*trusted);
  if (!profile) return Error{profile.error()};
  env.profile = (*match)->file;
  EnvEmission systemd = render_env(*profile, EnvFormat::systemd, config.allow_names);
  EnvEmission nccl_conf = render_env(*profile, EnvFormat::nccl_conf, config.allow_names);
  env.warnings = std::move(systemd.warnings);
  env.environment_file = one_line("# nccltuned: " + (*match)->file.string() + " (tuned for " +
                                  std::to_string((*match)->tuned_nodes) + " nodes)") +
                         "\n" + systemd.text;
  env.nccl_conf_body = std::move(nccl_conf.text);
  return env;
}

}  // namespace nccltune
