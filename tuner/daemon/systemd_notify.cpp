#include "daemon/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <ctime>
#include <string>

namespace nccltune {

namespace {

// STATUS= is one line: a newline would end the field and start a bogus assignment.
std::string status_line(std::string_view status) {
  std::string line(status.substr(0, status.find('\n')));
  return "STATUS=" + line;
}

void notify(const std::string& message) {
  sd_notify(0, message.c_str());
}

}  // namespace

std::optional<std::chrono::microseconds> SystemdNotifier::watchdog_ping_interval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
}

void SystemdNotifier::ready(std::string_view status) {
  notify("READY=1\n" + status_line(status));
}

void SystemdNotifier::status(std::string_view status) {
  notify(status_line(status));
}

void SystemdNotifier::reloading() {
  // systemd 253+ (Type=notify-reload) wants the monotonic time with RELOADING=1; older ones ignore it.
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const auto usec = static_cast<unsigned long long>(now.tv_sec) * 1000000ULL +
                    static_cast<unsigned long long>(now.tv_nsec) / 1000ULL;
  notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::stopping() {
  notify("STOPPING=1");
}

void SystemdNotifier::watchdog() {
  notify("WATCHDOG=1");
}

}  // namespace nccltune
