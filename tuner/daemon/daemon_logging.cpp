#include "daemon/daemon_logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <memory>

namespace nccltune {

namespace {

// %* -> the sd-daemon priority prefix of the message's level.
class JournalPriority : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& message, const std::tm&, spdlog::memory_buf_t& dest) override {
    const char* prefix = SD_INFO;
    switch (message.level) {
      case spdlog::level::trace:
      case spdlog::level::debug: prefix = SD_DEBUG; break;
      case spdlog::level::info: prefix = SD_INFO; break;
      case spdlog::level::warn: prefix = SD_WARNING; break;
      case spdlog::level::err: prefix = SD_ERR; break;
      default: prefix = SD_CRIT; break;
    }
    dest.append(prefix, prefix + std::char_traits<char>::length(prefix));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JournalPriority>();
  }
};

}  // namespace

void setup_daemon_logging(int verbosity) {
  auto logger = spdlog::stderr_logger_st("nccltuned");
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
  formatter->add_flag<JournalPriority>('*').set_pattern(journal ? "%*%l: %v" : "nccltuned %l: %v");
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::trace);  // a log file or pipe sees each line when it happens
  spdlog::set_default_logger(logger);
  auto level = verbosity >= 1 ? spdlog::level::debug : spdlog::level::info;
  if (const char* env = std::getenv("NCCLTUNE_LOG_LEVEL")) level = spdlog::level::from_str(env);
  spdlog::set_level(level);
}

}  // namespace nccltune
