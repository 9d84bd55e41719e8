#include "base/duration.h"

#include <charconv>
#include <cstdio>
#include <system_error>

#include "base/printable_text.h"

namespace nccltune {

Result<std::chrono::seconds> parse_duration(std::string_view text, std::chrono::seconds min,
                                            std::chrono::seconds max) {
  const std::string shown = printable_excerpt(text, 40);
  const Error bad{"'" + shown + "' is not a duration such as 90s, 5m or 1h30m"};
  if (text.empty()) return bad;
  long long total = 0;
  while (!text.empty()) {
    long long amount = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), amount);
    if (ec != std::errc() || end == text.data() || end == text.data() + text.size() || amount < 0) return bad;
    const char unit = *end;
    const long long scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
    if (scale == 0) return bad;
    if (amount > max.count() / scale || total + amount * scale > max.count())
      return Error{"'" + shown + "' is longer than " + format_duration(static_cast<double>(max.count()))};
    total += amount * scale;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()) + 1);
  }
  if (total < min.count())
    return Error{"'" + shown + "' is shorter than " + format_duration(static_cast<double>(min.count()))};
  return std::chrono::seconds(total);
}

std::string format_duration(double seconds) {
  const auto total = static_cast<long long>(seconds + 0.5);
  char text[64];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%lldh%02lldm", total / 3600, total % 3600 / 60);
  else if (total >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%llds", total);
  return text;
}

}  // namespace nccltune
