// UTF-8 decoding for readers of untrusted text (profiles, topology names written into XML).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nccltune {

// The code point at text[at], and its length in bytes; nullopt for invalid UTF-8 (overlong forms,
// surrogates, beyond U+10FFFF, truncated sequences).
std::optional<std::pair<char32_t, std::size_t>> decode_utf8(std::string_view text, std::size_t at);

// Whether the whole of text is valid UTF-8.
bool is_valid_utf8(std::string_view text);

// `text` with every byte that is not part of valid UTF-8 replaced by '?', for readers of tool
// output that is ASCII when sane (nvidia-smi, sysfs): what they keep can be written as JSON.
std::string repaired_utf8(std::string_view text);

}  // namespace nccltune
