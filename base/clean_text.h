// Free text from outside (a GPU name, a failure reason, a profile field) as the files and pages
// that nccltune writes may hold it: valid UTF-8, no control characters, bounded length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nccltune {

inline constexpr std::size_t kMaxFreeText = 4096;  // any free-text field, in bytes

// Valid UTF-8, no control characters (C0, DEL, C1), at most kMaxFreeText bytes.
bool is_clean_text(std::string_view text);

// `text` repaired the way writers store it: control characters become spaces, invalid UTF-8
// bytes '?', cut at a character boundary within kMaxFreeText bytes. is_clean_text holds for the
// result.
std::string cleaned_text(std::string_view text);

}  // namespace nccltune
