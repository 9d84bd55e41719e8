// The default paths a node's nccltune parts share: `nccltune env`, nccltune-env, the tuner
// plugin and nccltuned read the same config and the same node state file.
#pragma once

namespace nccltune {

// The node config (env: and daemon: sections; configs/nccltune.yaml): <sysconfdir>/nccltune/
// nccltune.yaml of the install prefix CMake was configured with (/etc for prefix /usr), the path
// `cmake --install` puts it at. $NCCLTUNE_CONFIG or --config name another.
inline constexpr const char* kDefaultConfigFile = NCCLTUNE_CONFIG_FILE;
// The daemon's node state file (node_state.h), read for the node type key.
inline constexpr const char* kDefaultNodeStateFile = "/run/nccltune/node.yaml";

}  // namespace nccltune
