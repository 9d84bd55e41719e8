#include "cli/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace nccltune {

void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("nccltune");
  logger->set_pattern("nccltune %^%l%$: %v");
  spdlog::set_default_logger(logger);
  auto level = verbosity >= 2   ? spdlog::level::debug
               : verbosity == 1 ? spdlog::level::info
                                : spdlog::level::warn;
  if (const char* env = std::getenv("NCCLTUNE_LOG_LEVEL")) level = spdlog::level::from_str(env);
  spdlog::set_level(level);
}

}  // namespace nccltune
