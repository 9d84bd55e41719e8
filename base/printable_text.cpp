#include "base/printable_text.h"

#include <cstdio>

namespace nccltune {

std::string printable_excerpt(std::string_view text, std::size_t limit) {
  std::string out;
  for (char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  if (text.size() > limit) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string printable_field(std::string_view text) {
  constexpr std::size_t kMaxText = 1000;  // escaped (\xNN, 4 bytes each), within 4096 bytes
  std::string shown = printable_excerpt(text.substr(0, kMaxText), kMaxText);
  if (text.size() <= kMaxText && shown.size() <= kMaxText) return shown;
  const std::string cut = "... (" + std::to_string(text.size()) + " bytes)";
  shown.resize(kMaxText - cut.size());
  return shown + cut;
}

void print_error_line(std::string_view prefix, std::string_view message) {
  const std::string line = std::string(prefix) + ": " + printable_excerpt(message, 2000) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace nccltune
