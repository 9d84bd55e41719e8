// Quoting untrusted values in one-line error messages: printable ASCII only, bounded length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nccltune {

// The first `limit` bytes, other bytes as \xNN, and "... (N bytes)" when cut.
std::string printable_excerpt(std::string_view text, std::size_t limit);

}  // namespace nccltune
