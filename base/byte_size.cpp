#include "base/byte_size.h"

#include <cctype>
#include <charconv>
#include <limits>

namespace nccltune {

Result<std::size_t> parse_byte_size(std::string_view text) {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr == text.data())
    return Error{"'" + std::string(text) + "': not a size (e.g. 8, 64K, 1M, 16G)"};
  std::size_t scale = 1;
  if (ptr != end) {
    switch (std::toupper(static_cast<unsigned char>(*ptr))) {
      case 'K': scale = 1ull << 10; break;
      case 'M': scale = 1ull << 20; break;
      case 'G': scale = 1ull << 30; break;
      case 'T': scale = 1ull << 40; break;
      default: return Error{"'" + std::string(text) + "': unknown size suffix (K, M, G or T)"};
    }
    ++ptr;
    if (ptr != end && (*ptr == 'B' || *ptr == 'b')) ++ptr;
    if (ptr != end) return Error{"'" + std::string(text) + "': not a size (e.g. 8, 64K, 1M, 16G)"};
  }
  if (value > std::numeric_limits<std::size_t>::max() / scale)
    return Error{"'" + std::string(text) + "': too large"};
  return value * scale;
}

std::string format_byte_size(std::size_t bytes) {
  static constexpr const char* kSuffixes[] = {"", "K", "M", "G", "T"};
  int step = 0;
  while (step < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++step;
  }
  return std::to_string(bytes) + kSuffixes[step];
}

}  // namespace nccltune
