// Text from profiles, journals and topologies placed into HTML or SVG. All of it is untrusted (a
// profile comes from a shared store, a snapshot from a bug report), so every string goes through
// html_text before it reaches markup.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nccltune {

// Escapes & < > " ' for element content and quoted attribute values alike. Text with control
// characters or invalid UTF-8 (or over kMaxFreeText bytes) is first shown as
// printable_excerpt, so nothing but printable text reaches the page.
std::string html_text(std::string_view text);

// The first `limit` code points of `text`, with an ellipsis when cut; for labels that must fit a
// tile or a legend row (the whole text then goes into a tooltip).
std::string shorten(std::string_view text, std::size_t limit);

}  // namespace nccltune
