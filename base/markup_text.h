// Text placed into markup (HTML, SVG, XML attribute values and content): the one escaper.
#pragma once

#include <string>
#include <string_view>

namespace nccltune {

// & < > " ' as character references (' as &#39;, which HTML and XML both read), and tab, newline
// and carriage return as &#9; &#10; &#13; so that an attribute value keeps them. Every other byte
// is kept: callers that take text from outside check it first (is_clean_text, is_valid_utf8).
std::string escape_markup(std::string_view text);

}  // namespace nccltune
