// Writes that never leave a half-written file behind: temp file in the same directory, fsync,
// rename over the target, fsync the directory.
#pragma once

#include <filesystem>
#include <string_view>

#include "result.h"

namespace nccltune {

Result<bool> write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Reads a whole file; the error names the file.
Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace nccltune
