// The NCCL env plugin's entry points (libnccl-env-nccltune.so, NCCL_ENV_PLUGIN=nccltune): the v2
// and v1 tables NCCL 2.28.7+ looks up by name. NCCL asks it for every variable it reads; it
// answers the process's own environment first, then the job's profile (job_env_serving.h), then
// nothing. The profile is found and checked once, in init; getEnv only reads what init built, so
// it never blocks. Loaded into every NCCL application: every entry point catches, logs and
// returns ncclSuccess, so a broken store or config never fails NCCL's init (fail-open).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <string_view>

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

// v2 logs through NCCL's logger (NCCL_DEBUG=INFO / WARN show it, with NCCL's own prefix); v1 has
// none: its warnings go to stderr, its information nowhere.
void log_line(ncclDebugLogger_t logger, bool warning, const std::string& text) noexcept {
  if (logger != nullptr)
    logger(warning ? NCCL_LOG_WARN : NCCL_LOG_INFO, NCCL_ENV | NCCL_INIT, __FILE__, __LINE__,
           "ENV/nccltune: %s", text.c_str());
  else if (warning)
    std::fprintf(stderr, "nccltune env plugin: %s\n", text.c_str());
}

std::map<std::string, std::string> serving_environment() {
  std::map<std::string, std::string> environment;
  for (const char* name : kLauncherShapeVariables)
    if (const char* value = std::getenv(name)) environment.emplace(name, value);
  if (const char* off = std::getenv("NCCLTUNE_DISABLE")) environment.emplace("NCCLTUNE_DISABLE", off);
  return environment;
}

ncclResult_t init_v2(std::uint8_t major, std::uint8_t minor, std::uint8_t patch, const char* /*suffix*/,
                     ncclDebugLogger_t logger) noexcept {
  try {
    JobEnv served = job_env(serving_environment(), profile_locations_from_environment(),
                            NcclLibraryVersion{major, minor, patch}, ::geteuid());
    for (const PluginLogLine& line : served.log) log_line(logger, line.warning, line.text);
    if (!served.values.empty()) {
      delete served_values;
      served_values = new ServedValues(served.values.begin(), served.values.end());
    }
  } catch (const std::exception& error) {
    log_line(logger, true, std::string("init failed: ") + error.what() + "; NCCL's own settings stand");
  } catch (...) {
    log_line(logger, true, "init failed: unknown exception; NCCL's own settings stand");
  }
  return ncclSuccess;  // never NCCL's init failing because of a profile
}

ncclResult_t init_v1(std::uint8_t major, std::uint8_t minor, std::uint8_t patch,
                     const char* suffix) noexcept {
  return init_v2(major, minor, patch, suffix, nullptr);
}

ncclResult_t finalize() noexcept {
  delete served_values;
  served_values = nullptr;
  return ncclSuccess;
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
