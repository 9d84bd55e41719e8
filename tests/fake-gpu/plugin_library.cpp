#include "plugin_library.h"

#include <dlfcn.h>
#include <link.h>

namespace nccltune::fake {

void* open_plugin_library(const std::string& name, const std::string& prefix, const std::string& tag,
                          std::string& opened, std::vector<std::string>& lines) {
  std::vector<std::string> candidates{name.empty() ? prefix + ".so" : name};
  const bool library_name = name.rfind("lib", 0) == 0 && name.size() >= 3 && name.ends_with(".so");
  if (!name.empty() && name.find('/') == std::string::npos && !library_name)
    candidates.push_back(prefix + "-" + name + ".so");
  std::string missing;
  for (const std::string& candidate : candidates) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      // NCCL names the library by the path the loader found (getLibPath: the link map's l_name).
      link_map* map = nullptr;
      opened = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
                       map->l_name[0] != '\0'
                   ? map->l_name
                   : candidate;
      return handle;
    }
    const char* error = dlerror();
    const std::string why = error ? error : "unknown error";
    if (why.find("No such file or directory") != std::string::npos)
      missing += " " + candidate;
    else
      lines.push_back(tag + "/Plugin: " + candidate + ": " + why);
  }
  if (!missing.empty()) lines.push_back(tag + "/Plugin: Could not find:" + missing);
  return nullptr;
}

}  // namespace nccltune::fake
