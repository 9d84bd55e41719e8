// The tuner NCCL loads by default on a node (`nccltune check`'s default_tuner, tune's header): with
// NCCL_TUNER_PLUGIN unset NCCL opens libnccl-tuner.so, and when the loader finds none, the net
// plugin's library (libnccl-net.so, or libnccl-net-<NCCL_NET_PLUGIN>.so), and takes the newest
// tuner table it exports (src/plugin/tuner.cc, ncclTunerPluginLoad; src/plugin/plugin_open.cc,
// openPluginLib). Such a tuner (aws-ofi-nccl's, gIB's) changes NCCL's choices in every job that
// leaves NCCL_TUNER_PLUGIN unset, so NCCL's "defaults" there are the tuner's. The lookup itself,
// through the dynamic loader, is sources/nccl_tuner_probe.h; what is said of it is here, pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/checks.h"

namespace nccltune {

// The tuner tables NCCL reads, newest first: v6 from NCCL 2.30.3, v5 to v2 before it
// (getNcclTuner_v6 ... _v2). A library exporting only a newer table than its NCCL knows is
// "unsupported" there.
inline constexpr std::string_view kNcclTunerSymbols[] = {"ncclTunerPlugin_v6", "ncclTunerPlugin_v5",
                                                          "ncclTunerPlugin_v4", "ncclTunerPlugin_v3",
                                                          "ncclTunerPlugin_v2"};

// The names openPluginLib tries for a plugin of `prefix` ("libnccl-tuner", "libnccl-net") asked for
// by `name` (a variable's value; empty when unset): `<prefix>.so` when unset; else `name` as given,
// then `<prefix>-<name>.so` unless `name` is a path (holds '/') or a library name (lib*.so).
std::vector<std::string> nccl_plugin_library_names(std::string_view name, std::string_view prefix);

// What NCCL's lookup found. `library` is the name NCCL opened ("libnccl-tuner.so"), `path` where
// the loader found it (NCCL names it so: the link map's l_name), `symbol` the newest tuner table it
// exports (empty: none). `from_net_plugin`: no tuner library, the net plugin's library instead.
// `open_error`: the loader found a library by that name and could not load it (NCCL logs it as an
// INFO line and goes on without it).
struct NcclTunerLibrary {
  std::string library, path, symbol;
  bool from_net_plugin = false;
  std::string open_error;
  friend bool operator==(const NcclTunerLibrary&, const NcclTunerLibrary&) = default;
};

// The tuner NCCL loads from a lookup's result: a library with a table. nullopt: NCCL's own.
bool loads_a_tuner(const std::optional<NcclTunerLibrary>& found);

// check's default_tuner finding on the lookup's result (nullopt: nothing found): pass when NCCL
// loads nothing, or loads a tuner (the node is healthy; the message says what it means for tuning);
// warn when libnccl-tuner.so is there but NCCL cannot use it (no tuner table it reads, or the loader
// cannot load it): jobs then run NCCL's own choices where someone meant a tuner to run.
Finding default_tuner_finding(const std::optional<NcclTunerLibrary>& found);

// tune's header words: "none" or "libnccl-tuner.so (/usr/lib/libnccl-tuner.so) exports
// ncclTunerPlugin_v5".
std::string describe_default_tuner(const std::optional<NcclTunerLibrary>& found);

}  // namespace nccltune
