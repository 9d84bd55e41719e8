#include "base/utf8.h"

namespace nccltune {

std::optional<std::pair<char32_t, std::size_t>> decode_utf8(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return std::make_pair(char32_t{lead}, std::size_t{1});
  std::size_t length = 0;
  char32_t point = 0;
  char32_t minimum = 0;
  if ((lead & 0xe0) == 0xc0) {
    length = 2, point = lead & 0x1f, minimum = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, point = lead & 0x0f, minimum = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, point = lead & 0x07, minimum = 0x10000;
  } else {
    return std::nullopt;
  }
  if (at + length > text.size()) return std::nullopt;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return std::nullopt;
    point = (point << 6) | (byte(at + i) & 0x3f);
  }
  if (point < minimum || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return std::nullopt;
  return std::make_pair(point, length);
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const auto decoded = decode_utf8(text, at);
    if (!decoded) return false;
    at += decoded->second;
  }
  return true;
}

std::string repaired_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto decoded = decode_utf8(text, at);
    const std::size_t step = decoded ? decoded->second : 1;
    if (decoded)
      out.append(text.substr(at, step));
    else
      out += '?';
    at += step;
  }
  return out;
}

}  // namespace nccltune
