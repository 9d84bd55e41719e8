// Durations as people type them in flags and configs ("90s", "5m", "1h30m") and as nccltune
// prints them ("12m05s"): one grammar for `tune --budget` and the daemon's interval.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/result.h"

namespace nccltune {

// One or more groups of a whole number and a unit (h, m or s), without spaces or signs: "90s",
// "5m", "1h30m". A bare number is refused (seconds or minutes?). The value must lie within
// [min, max]; errors quote the text: "'5x' is not a duration such as 90s, 5m or 1h30m",
// "'25h' is longer than 24h00m".
Result<std::chrono::seconds> parse_duration(std::string_view text, std::chrono::seconds min,
                                            std::chrono::seconds max);

// "41s", "12m05s", "1h30m" (rounded to the second; hours drop the seconds).
std::string format_duration(double seconds);

}  // namespace nccltune
