// What the plugin tests share: NCCL's side of the logger a plugin gets at init, what it captured,
// and the plugin directory key of the profile fixtures.
#pragma once

#include <algorithm>
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

// How many captured lines at `level` hold `part`; whether any does; all of them, for a failure.
inline long count_logged(nccl_abi::ncclDebugLogLevel level, const std::string& part) {
  return std::count_if(g_logged.begin(), g_logged.end(), [&](const LoggedLine& line) {
    return line.level == level && line.text.find(part) != std::string::npos;
  });
}
inline bool logged(nccl_abi::ncclDebugLogLevel level, const std::string& part) {
  return count_logged(level, part) > 0;
}
inline std::string all_log() {
  std::string out;
  for (const LoggedLine& line : g_logged) out += std::to_string(line.level) + ": " + line.text + "\n";
  return out;
}

}  // namespace nccltune::test_support
