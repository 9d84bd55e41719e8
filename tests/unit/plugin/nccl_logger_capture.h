// What the plugin tests share: NCCL's side of the logger a plugin gets at init, and the plugin
// directory key of the profile fixtures.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/nccl_tuner_common.h"

namespace nccltune::test_support {

inline constexpr const char* kPluginNodeTypeKey = "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28";

struct LoggedLine {
  nccl_abi::ncclDebugLogLevel level;
  unsigned long flags;
  std::string text;
};
inline std::vector<LoggedLine> g_logged;
inline std::mutex g_logged_mutex;  // NCCL may init communicators, and so log, from several threads

// Has NCCL's logger's C signature (printf-style, variadic): keeps each line in g_logged.
__attribute__((format(printf, 5, 6))) inline void capture_nccl_log(nccl_abi::ncclDebugLogLevel level,
                                                                   unsigned long flags, const char* /*file*/,
                                                                   int /*line*/, const char* format, ...) {
  char text[4096];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  const std::lock_guard lock(g_logged_mutex);
  g_logged.push_back({level, flags, text});
}

}  // namespace nccltune::test_support
