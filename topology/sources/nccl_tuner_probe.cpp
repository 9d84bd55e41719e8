#include "topology/sources/nccl_tuner_probe.h"

#include <dlfcn.h>
#include <link.h>
#include <strings.h>

#include <memory>

namespace nccltune {

namespace {

struct TunerLibraryCloser {
  void operator()(void* handle) const { dlclose(handle); }
};
using TunerLibrary = std::unique_ptr<void, TunerLibraryCloser>;

// openPluginLib: the first of its names the loader opens. A name the loader does not find is
// skipped; one it finds and cannot load is `error` (NCCL logs it and goes on).
TunerLibrary open_plugin(const std::string& name, const char* prefix, NcclTunerLibrary& opened) {
  for (const std::string& candidate : nccl_plugin_library_names(name, prefix)) {
    dlerror();
    if (void* handle = dlopen(candidate.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
      opened.library = candidate;
      link_map* map = nullptr;
      opened.path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]
                        ? map->l_name
                        : candidate;
      opened.open_error.clear();
      return TunerLibrary(handle);
    }
    const char* error = dlerror();
    const std::string why = error ? error : "unknown error";
    if (why.find("No such file or directory") == std::string::npos && opened.open_error.empty()) {
      opened.library = candidate;
      opened.open_error = why;
    }
  }
  return nullptr;
}

std::string newest_tuner_table(void* handle) {
  for (const std::string_view symbol : kNcclTunerSymbols)
    if (dlsym(handle, std::string(symbol).c_str())) return std::string(symbol);
  return "";
}

std::optional<NcclTunerLibrary> net_plugin_tuner(const std::optional<std::string>& net_plugin) {
  std::vector<std::string> names;
  if (!net_plugin) {
    names.push_back("libnccl-net.so");
  } else if (strcasecmp(net_plugin->c_str(), "none") != 0) {
    std::string::size_type start = 0;
    while (start <= net_plugin->size()) {
      const auto comma = net_plugin->find(',', start);
      std::string name = net_plugin->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) names.push_back(std::move(name));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  for (const std::string& name : names) {
    NcclTunerLibrary net;
    const TunerLibrary handle = open_plugin(name, "libnccl-net", net);
    if (!handle) continue;
    // A net plugin without a tuner table is the common case: NCCL says nothing and runs its own.
    net.symbol = newest_tuner_table(handle.get());
    if (net.symbol.empty()) return std::nullopt;
    net.from_net_plugin = true;
    return net;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NcclTunerLibrary> find_nccl_tuner(const std::optional<std::string>& tuner_plugin,
                                                const std::optional<std::string>& net_plugin) {
  if (tuner_plugin && strcasecmp(tuner_plugin->c_str(), "none") == 0) return std::nullopt;
  NcclTunerLibrary tuner;
  if (const TunerLibrary handle = open_plugin(tuner_plugin.value_or(""), "libnccl-tuner", tuner)) {
    // NCCL takes the library it opened or nothing: without a table it does not try the net plugin.
    tuner.symbol = newest_tuner_table(handle.get());
    return tuner;
  }
  if (auto net = net_plugin_tuner(net_plugin)) return net;
  if (!tuner.open_error.empty()) return tuner;
  return std::nullopt;
}

}  // namespace nccltune
