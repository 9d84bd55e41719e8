// Writes that never leave a half-written file behind (temp file in the same directory, fsync,
// rename over the target, fsync the directory), and reads that cannot hang or exhaust memory on
// whatever a path names: a FIFO, a device, /dev/zero, a directory.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
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

// Replaces a regular file, or creates one where nothing stands. Anything else at `path` (a
// symlink, FIFO, device, directory, socket) is refused and left as it is: an operator's `-o` typo
// must not replace /dev/full or follow a link into someone else's file.
Status write_file_atomically(const std::filesystem::path& path, std::string_view content,
                             const FileAttributes& attributes = {});

// Size caps by kind of input, so one hostile or mistaken path cannot take gigabytes.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;     // YAML configs, profiles, node state
inline constexpr std::size_t kMaxSnapshotBytes = std::size_t{16} << 20;  // topology snapshot files, hwloc XML
inline constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20;       // nccl-tests and NCCL logs
inline constexpr std::size_t kMaxJournalBytes = std::size_t{256}
                                                << 20;  // a tune journal (one line per trial)

// Reads a whole regular file of at most `max_bytes`. Errors name the file and what was found:
// "no such file", "is a FIFO", "is a directory", "larger than 16 MiB".
Result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes);

// Writes all of `content` to `fd`, again after a partial write or EINTR; false (errno says why)
// when a write fails.
bool write_all(int fd, std::string_view content);

// What stands at `path`, for messages: "a FIFO", "a directory", "a symlink"...
std::string describe_file_type(mode_t mode);

}  // namespace nccltune
