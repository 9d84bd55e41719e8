// How NCCL 2.28.9 finds a plugin library (src/plugin/plugin_open.cc, openPluginLib), for the fake
// NCCL's tuner and env plugin hosts: the name as dlopen takes it (unset: "<prefix>.so"), then, for
// a bare name (no '/', not "lib*.so"), "<prefix>-<name>.so". What it could not open goes into
// `lines` as NCCL's INFO lines say it ("<TAG>/Plugin: Could not find: ...").
#pragma once

#include <string>
#include <vector>

namespace nccltune::fake {

// `prefix`: "libnccl-tuner", "libnccl-env"; `tag`: "TUNER", "ENV". Returns the dlopen handle
// (RTLD_NOW | RTLD_LOCAL) and, in `opened`, the path the loader found it at (NCCL's getLibPath,
// which its "Successfully loaded" lines print), or nullptr.
void* open_plugin_library(const std::string& name, const std::string& prefix, const std::string& tag,
                          std::string& opened, std::vector<std::string>& lines);

}  // namespace nccltune::fake
