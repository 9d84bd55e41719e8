#include "base/clean_text.h"

#include "base/utf8.h"

namespace nccltune {

namespace {

bool is_control(char32_t point) {
  return point < 0x20 || (point >= 0x7f && point <= 0x9f);
}

}  // namespace

bool is_clean_text(std::string_view text) {
  if (text.size() > kMaxFreeText) return false;
  for (std::size_t at = 0; at < text.size();) {
    const auto decoded = decode_utf8(text, at);
    if (!decoded || is_control(decoded->first)) return false;
    at += decoded->second;
  }
  return true;
}

std::string cleaned_text(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const auto decoded = decode_utf8(text, at);
    std::string_view piece = "?";
    std::size_t step = 1;
    if (decoded) {
      step = decoded->second;
      piece = is_control(decoded->first) ? std::string_view(" ") : text.substr(at, step);
    }
    if (out.size() + piece.size() > kMaxFreeText) break;
    out += piece;
    at += step;
  }
  return out;
}

}  // namespace nccltune
