// The NCCL env plugin's entry points (libnccl-env-nccltune.so, NCCL_ENV_PLUGIN=nccltune): the v2
// and v1 tables NCCL 2.28.7+ looks up by name. NCCL asks it for every variable it reads; it
// answers the process's own environment first, then the job's profile (job_env_serving.h), then
// nothing. The profile is found and checked once, in init; getEnv only reads what init built, so
// it never blocks. Loaded into every NCCL application: every entry point catches, logs and
// returns ncclSuccess, so a broken store or config never fails NCCL's init (fail-open).
#include <strings.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "node/env_format.h"
#include "node/launcher_shape.h"
#include "plugin/job_env_serving.h"
#include "plugin/nccl_env_v1_v2.h"

namespace nccltune {
namespace {

using namespace nccl_abi;

// What init built: read-only until finalize, so getEnv needs no lock (NCCL calls it from any
// thread). The values' strings are what getEnv returns.
// std::less<> finds a const char* without building a std::string: getEnv cannot throw.
using ServedValues = std::map<std::string, std::string, std::less<>>;
ServedValues* served_values = nullptr;

// v2 logs through NCCL's logger (NCCL_DEBUG=INFO / WARN show it, with NCCL's own prefix). v1, all
// that NCCL 2.28.7 to 2.30.7 look up, has none: warnings go to stderr, and information too when
// NCCL_DEBUG asks for INFO or TRACE, as NCCL's own lines would.
bool nccl_debug_info() noexcept {
  const char* level = std::getenv("NCCL_DEBUG");
  return level != nullptr && (strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0);
}

void log_line(ncclDebugLogger_t logger, bool warning, const std::string& text) noexcept {
  if (logger != nullptr)
    logger(warning ? NCCL_LOG_WARN : NCCL_LOG_INFO, NCCL_ENV | NCCL_INIT, __FILE__, __LINE__,
           "ENV/nccltune: %s", text.c_str());
  else if (warning || nccl_debug_info())
    std::fprintf(stderr, "nccltune env plugin: %s\n", text.c_str());
}

// For the catch handlers of init: builds no string, so it cannot throw (a std::bad_alloc escaping
// a noexcept entry point would terminate the application).
void log_failure(ncclDebugLogger_t logger, const char* reason) noexcept {
  if (logger != nullptr)
    logger(NCCL_LOG_WARN, NCCL_ENV | NCCL_INIT, __FILE__, __LINE__,
           "ENV/nccltune: init failed: %s; NCCL's own settings stand", reason);
  else
    std::fprintf(stderr, "nccltune env plugin: init failed: %s; NCCL's own settings stand\n", reason);
}

std::map<std::string, std::string> serving_environment() {
  std::map<std::string, std::string> environment;
  for (const char* name : kLauncherShapeVariables)
    if (const char* value = std::getenv(name)) environment.emplace(name, value);
  if (const char* off = std::getenv("NCCLTUNE_DISABLE")) environment.emplace("NCCLTUNE_DISABLE", off);
  if (const char* domains = std::getenv("NCCLTUNE_DOMAINS")) environment.emplace("NCCLTUNE_DOMAINS", domains);
  return environment;
}

ncclResult_t finalize() noexcept {
  delete served_values;
  served_values = nullptr;
  return ncclSuccess;
}

ncclResult_t init_v2(std::uint8_t major, std::uint8_t minor, std::uint8_t patch, const char* /*suffix*/,
                     ncclDebugLogger_t logger) noexcept {
  finalize();  // NCCL inits once per process; a second init starts over
  try {
    JobEnv served = job_env(serving_environment(), profile_locations_from_environment(),
                            NcclLibraryVersion{major, minor, patch}, ::geteuid());
    for (const PluginLogLine& line : served.log) log_line(logger, line.warning, line.text);
    // get_env answers the job's own value first; say which of the profile's it stands in for.
    for (const auto& [name, value] : served.values)
      if (const char* own = std::getenv(name.c_str()))
        log_line(logger, false, describe_kept({name, own, value}));
    if (!served.values.empty()) served_values = new ServedValues(served.values.begin(), served.values.end());
  } catch (const std::exception& error) {
    log_failure(logger, error.what());
  } catch (...) {
    log_failure(logger, "unknown exception");
  }
  return ncclSuccess;  // never NCCL's init failing because of a profile
}

ncclResult_t init_v1(std::uint8_t major, std::uint8_t minor, std::uint8_t patch,
                     const char* suffix) noexcept {
  return init_v2(major, minor, patch, suffix, nullptr);
}

const char* get_env(const char* name) noexcept {
  if (name == nullptr) return nullptr;
  if (const char* own = std::getenv(name)) return own;  // the job's own setting always wins
  if (served_values == nullptr) return nullptr;
  const auto found = served_values->find(std::string_view(name));
  return found == served_values->end() ? nullptr : found->second.c_str();
}

}  // namespace
}  // namespace nccltune

extern "C" {
__attribute__((visibility("default"))) nccltune::nccl_abi::ncclEnv_v2_t ncclEnvPlugin_v2 = {
    "nccltune", nccltune::init_v2, nccltune::finalize, nccltune::get_env};
__attribute__((visibility("default"))) nccltune::nccl_abi::ncclEnv_v1_t ncclEnvPlugin_v1 = {
    "nccltune", nccltune::init_v1, nccltune::finalize, nccltune::get_env};
}
