// The adapter to systemd's service manager protocol (libsystemd's sd_notify): READY, STATUS,
// RELOADING, STOPPING and WATCHDOG messages. Outside systemd (no NOTIFY_SOCKET) every call does
// nothing, so the daemon runs the same from a shell.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace nccltune {

class SystemdNotifier {
 public:
  // How often to send WATCHDOG=1: half of WATCHDOG_USEC (sd_watchdog_enabled), nullopt when the
  // unit has no watchdog.
  static std::optional<std::chrono::microseconds> watchdog_ping_interval();

  static void ready(std::string_view status);
  static void status(std::string_view status);
  static void reloading();
  static void stopping();
  static void watchdog();
};

}  // namespace nccltune
