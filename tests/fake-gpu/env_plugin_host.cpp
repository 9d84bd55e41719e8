#include "env_plugin_host.h"

#include <dlfcn.h>
#include <strings.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "nccl_tuner_abi.h"
#include "nccl_variables.h"
#include "plugin_library.h"

namespace nccltune::fake {
namespace {

using tuner_abi::ncclResult_t;
// NCCL 2.28.7 to 2.30.4 look up ncclEnvPlugin_v1 only (src/plugin/env/env_v1.cc); 2.30.7 looks up
// ncclEnvPlugin_v2 first, whose init also takes NCCL's logger, then v1 (src/plugin/env.cc,
// ncclEnvPluginLoad; src/plugin/env/env_v2.cc).
constexpr int kFirstEnvV2Version = 23007;

using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* format, ...);

// NCCL's env plugin tables (plugins/env/example/nccl/env_v1.h, env_v2.h in NCCL 2.28.9).
struct EnvV1 {
  const char* name;
  ncclResult_t (*init)(std::uint8_t major, std::uint8_t minor, std::uint8_t patch, const char* suffix);
  ncclResult_t (*finalize)();
  const char* (*getEnv)(const char* name);
};
struct EnvV2 {
  const char* name;
  ncclResult_t (*init)(std::uint8_t major, std::uint8_t minor, std::uint8_t patch, const char* suffix,
                       Logger log);
  ncclResult_t (*finalize)();
  const char* (*getEnv)(const char* name);
};

// The process's plugin, as NCCL keeps it: loaded once, never unloaded before exit.
struct LoadedPlugin {
  const char* (*get_env)(const char*) = nullptr;  // null: NCCL's internal plugin (getenv)
  bool init_failed = false;
  std::vector<EnvPluginLine> lines;
};
LoadedPlugin* loaded = nullptr;
std::once_flag load_once;

// The logger handed to init, as NCCL's ncclDebugLog: kept until a communicator's log prints them.
__attribute__((format(printf, 5, 6))) void plugin_log(int level, unsigned long /*flags*/,
                                                      const char* /*file*/, int /*line*/, const char* format,
                                                      ...) {
  if (loaded == nullptr || format == nullptr || level < tuner_abi::kLogWarn) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  loaded->lines.push_back({level == tuner_abi::kLogWarn, text});
}

void emulate_launcher_locals() {
  const char* nodes = std::getenv("NCCLTUNE_EMULATE_NODES");
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (nodes == nullptr || size == nullptr) return;
  const long n = std::strtol(nodes, nullptr, 10), s = std::strtol(size, nullptr, 10);
  if (n >= 1 && s >= n && s % n == 0) setenv("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(s / n).c_str(), 1);
}

void load(int nccl_version) {
  loaded = new LoadedPlugin;
  const char* name = std::getenv("NCCL_ENV_PLUGIN");
  if (name != nullptr) {
    loaded->lines.push_back({false, std::string("NCCL_ENV_PLUGIN set by environment to ") + name});
    if (strcasecmp(name, "none") == 0) return;
  }
  std::string opened;
  std::vector<std::string> missing;
  void* library = open_plugin_library(name ? name : "", "libnccl-env", "ENV", opened, missing);
  for (std::string& line : missing) loaded->lines.push_back({false, std::move(line)});
  if (library == nullptr) return;
  const auto major = static_cast<std::uint8_t>(nccl_version / 10000);
  const auto minor = static_cast<std::uint8_t>(nccl_version / 100 % 100);
  const auto patch = static_cast<std::uint8_t>(nccl_version % 100);
  ncclResult_t result{};
  emulate_launcher_locals();
  // ncclEnvPlugin_v2 (init with NCCL's logger) only where NCCL looks it up: 2.30.7 and newer.
  const auto* v2 = nccl_version >= kFirstEnvV2Version
                       ? static_cast<const EnvV2*>(dlsym(library, "ncclEnvPlugin_v2"))
                       : nullptr;
  if (v2 != nullptr) {
    loaded->lines.push_back(
        {false, std::string("ENV/Plugin: Using ") + (v2->name ? v2->name : "") + " (v2)"});
    loaded->lines.push_back({false, "Successfully loaded external env plugin " + opened});
    loaded->get_env = v2->getEnv;
    result = v2->init(major, minor, patch, "", plugin_log);
  } else if (const auto* v1 = static_cast<const EnvV1*>(dlsym(library, "ncclEnvPlugin_v1"))) {
    loaded->lines.push_back(
        {false, std::string("ENV/Plugin: Using ") + (v1->name ? v1->name : "") + " (v1)"});
    loaded->lines.push_back({false, "Successfully loaded external env plugin " + opened});
    loaded->get_env = v1->getEnv;
    result = v1->init(major, minor, patch, "");
  } else {
    loaded->lines.push_back({false, "External env plugin " + opened + " is unsupported"});
    dlclose(library);
    return;
  }
  if (result != tuner_abi::ncclResult_t{}) {
    loaded->init_failed = true;
    loaded->lines.push_back({true, "env plugin " + opened + ": init returned " +
                                       std::to_string(static_cast<int>(result)) + "; NCCL's init fails"});
  }
}

}  // namespace

PluginEnv read_nccl_env_through_plugin(char** environment, int nccl_version) {
  PluginEnv result;
  bool first = false;
  std::call_once(load_once, [&] {
    load(nccl_version);
    first = true;
  });
  result.init_failed = loaded->init_failed;
  if (first) result.lines = loaded->lines;
  const auto ask = [&result](const std::string& name) {
    const char* value = loaded->get_env ? loaded->get_env(name.c_str()) : std::getenv(name.c_str());
    if (value != nullptr && *value != '\0') result.env[name] = value;  // empty: NCCL treats it as unset
  };
  for (const char* name : kNcclVariables) ask(name);
  for (char** entry = environment; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    if (text.rfind("NCCL_", 0) == 0 && text.find('=') != std::string_view::npos)
      ask(std::string(text.substr(0, text.find('='))));
  }
  return result;
}

}  // namespace nccltune::fake
