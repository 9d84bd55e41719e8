#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nccltune {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    content.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view content,
                             const FileAttributes& attributes) {
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

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path.string() + ": cannot open: " + errno_text()};
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return Error{path.string() + ": read failed"};
  return content.str();
}

}  // namespace nccltune
