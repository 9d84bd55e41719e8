// Blank-separated words of one line of tool output (nvidia-smi, nccl-tests, NCCL's log), as
// views into the line: the one splitter and trimmer the text parsers share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccltune {

// Space, tab, CR, VT and FF; not newline (callers split lines first).
bool is_blank(char c);
// '0'..'9' only, whatever the locale.
bool is_digit(char c);

// The whole word as a decimal integer ("-12"); nullopt for anything else, overflow included.
std::optional<int64_t> to_int(std::string_view word);

// ASCII letters in upper case, every other byte as it is.
std::string upper_ascii(std::string_view text);

// `text` without leading and trailing blanks.
std::string_view trimmed(std::string_view text);

// The runs of non-blank characters, in order.
std::vector<std::string_view> split_words(std::string_view line);

// words[from..] joined by single spaces.
std::string join_words(const std::vector<std::string_view>& words, std::size_t from = 0);

}  // namespace nccltune
