#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nccltune {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

std::string mebibytes(std::size_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    content.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

std::string describe_file_type(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view content,
                             const FileAttributes& attributes) {
  struct stat existing;
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    return Error{path.string() + ": is " + describe_file_type(existing.st_mode) +
                 ", not a regular file: refusing to replace it"};
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::string temp = (dir / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);  // not inherited by a child spawned meanwhile
  if (fd < 0) return Error{path.string() + ": cannot create a temporary file: " + errno_text()};
  const bool owned = attributes.owner == static_cast<uid_t>(-1) && attributes.group == static_cast<gid_t>(-1)
                         ? true
                         : ::fchown(fd, attributes.owner, attributes.group) == 0;
  const bool ok = write_all(fd, content) && owned && ::fchmod(fd, attributes.mode) == 0 && ::fsync(fd) == 0;
  const std::string failure = ok ? std::string() : errno_text();
  ::close(fd);
  if (!ok) {
    ::unlink(temp.c_str());
    return Error{path.string() + ": write failed: " + failure};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp.c_str());
    return Error{path.string() + ": rename failed: " + why};
  }
  if (int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Ok{};
}

Result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer must not wait; a regular file ignores the flag.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return Error{path.string() + ": no such file"};
    return Error{path.string() + ": cannot open: " + errno_text()};
  }
  struct stat info;
  std::string content;
  std::string problem;
  if (::fstat(fd, &info) != 0) {
    problem = "cannot stat: " + errno_text();
  } else if (!S_ISREG(info.st_mode)) {
    problem = "is " + describe_file_type(info.st_mode) + ", not a regular file";
  } else if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    problem = "larger than " + mebibytes(max_bytes);
  } else {
    // Read to the cap plus one byte: a file that grows while read is still refused.
    content.resize(static_cast<std::size_t>(info.st_size) + 1);
    std::size_t used = 0;
    while (problem.empty()) {
      if (used == content.size()) {
        if (content.size() > max_bytes) {
          problem = "larger than " + mebibytes(max_bytes);
          break;
        }
        content.resize(std::min(max_bytes + 1, content.size() * 2 + 4096));
      }
      const ssize_t got = ::read(fd, content.data() + used, content.size() - used);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) problem = "read failed: " + errno_text();
      if (got <= 0) break;
      used += static_cast<std::size_t>(got);
    }
    content.resize(used);
  }
  ::close(fd);
  if (!problem.empty()) return Error{path.string() + ": " + problem};
  return content;
}

}  // namespace nccltune
