// Which tuner NCCL would load on this machine, found as NCCL finds it: through the dynamic loader
// (dlopen of the names openPluginLib tries, so LD_LIBRARY_PATH, the ld.so cache and the default
// directories count as they do for NCCL), then dlsym of its tuner tables. A scan of the library
// path would miss the cache's and the loader's own rules; dlopen runs the library's initializers,
// as every NCCL job on this machine does. NCCL dlopens with RTLD_NOW from libnccl.so, which may
// define what a plugin needs; this probe uses RTLD_LAZY so that such a plugin still opens here,
// and closes every library it opened.
#pragma once

#include <optional>
#include <string>

#include "topology/check_default_tuner.h"

namespace nccltune {

// NCCL's lookup under these values of NCCL_TUNER_PLUGIN and NCCL_NET_PLUGIN (nullopt: unset): the
// tuner library, else the net plugin's library when it exports a tuner table. nullopt: NCCL
// loads none (NCCL_TUNER_PLUGIN=none, or nothing found). An NCCL_NET_PLUGIN list counts its first
// library that opens.
std::optional<NcclTunerLibrary> find_nccl_tuner(const std::optional<std::string>& tuner_plugin,
                                                const std::optional<std::string>& net_plugin);

}  // namespace nccltune
