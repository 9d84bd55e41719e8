// Quoting untrusted values in one-line error messages: printable ASCII only, bounded length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nccltune {

// The first `limit` bytes, other bytes as \xNN, and "... (N bytes)" when cut.
std::string printable_excerpt(std::string_view text, std::size_t limit);

// A text for a file nccltune writes and reads back (node.yaml): escaped as printable_excerpt and
// cut to at most 1000 bytes with its length noted, so that it stays within the reader's limit for
// a field and a text read back from the file is written the same way again.
std::string printable_field(std::string_view text);

// Writes "<prefix>: <message>" and a newline to stderr as one line: a NUL, a newline or any other
// byte that is not printable ASCII in the message shown as \xNN, at most 2000 bytes of it.
void print_error_line(std::string_view prefix, std::string_view message);

}  // namespace nccltune
