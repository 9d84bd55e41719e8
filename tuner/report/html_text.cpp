#include "report/html_text.h"

#include "base/markup_text.h"
#include "base/printable_text.h"
#include "profile/profile.h"

namespace nccltune {

std::string html_text(std::string_view text) {
  if (is_clean_text(text)) return escape_markup(text);
  return escape_markup(printable_excerpt(text, kMaxFreeText));
}

std::string shorten(std::string_view text, std::size_t limit) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (points++ == limit) return std::string(text.substr(0, i)) + "\u2026";
  }
  return std::string(text);
}

}  // namespace nccltune
