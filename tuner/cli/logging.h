// Logging set-up shared by the front ends: spdlog to stderr, level from flags or
// NCCLTUNE_LOG_LEVEL (trace, debug, info, warn, error, off).
#pragma once

#include <string>

namespace nccltune {

// `verbosity`: 0 = warnings and errors, 1 = info, 2+ = debug. NCCLTUNE_LOG_LEVEL wins when set.
void setup_logging(int verbosity);

}  // namespace nccltune
