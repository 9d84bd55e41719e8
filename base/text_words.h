// Blank-separated words of one line of tool output (nvidia-smi, nccl-tests, NCCL's log), as
// views into the line: the one splitter and trimmer the text parsers share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nccltune {

// Space, tab, CR, VT and FF; not newline (callers split lines first).
bool is_blank(char c);

// `text` without leading and trailing blanks.
std::string_view trimmed(std::string_view text);

// The runs of non-blank characters, in order.
std::vector<std::string_view> split_words(std::string_view line);

// words[from..] joined by single spaces.
std::string join_words(const std::vector<std::string_view>& words, std::size_t from = 0);

}  // namespace nccltune
