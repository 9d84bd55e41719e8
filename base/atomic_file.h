// Writes that never leave a half-written file behind: temp file in the same directory, fsync,
// rename over the target, fsync the directory.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

#include "base/status.h"

namespace nccltune {

// The new file's permission bits (set exactly, whatever the umask) and owner; (uid_t)-1 and
// (gid_t)-1 leave the writer's.
struct FileAttributes {
  mode_t mode = 0644;
  uid_t owner = static_cast<uid_t>(-1);
  gid_t group = static_cast<gid_t>(-1);
};

Status write_file_atomically(const std::filesystem::path& path, std::string_view content,
                             const FileAttributes& attributes = {});

// Reads a whole file; the error names the file.
Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace nccltune
