#include "profile/store_permissions.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "base/printable_text.h"
#include "base/status.h"

namespace nccltune {

namespace {

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string shown(const std::filesystem::path& path) {
  return printable_excerpt(path.native(), 200);
}

bool trusted_owner(uid_t owner, uid_t caller_uid) {
  return owner == 0 || owner == caller_uid;
}

Result<struct stat> directory_stat(const std::filesystem::path& directory) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) return Error{shown(directory) + ": " + std::strerror(errno)};
  if (!S_ISDIR(info.st_mode)) return Error{shown(directory) + ": not a directory"};
  return info;
}

Status check_store_directory(const std::filesystem::path& directory, uid_t caller_uid) {
  const Result<struct stat> info = directory_stat(directory);
  if (!info) return Error{info.error()};
  if (const auto problem = ownership_problem(*info, caller_uid))
    return Error{shown(directory) + ": store directory " + *problem + "; refusing its profiles"};
  return Ok{};
}

// Every directory above the (canonical) store root, up to /.
Status check_ancestors(const std::filesystem::path& root, uid_t caller_uid) {
  Result<struct stat> child = directory_stat(root);
  if (!child) return Error{child.error()};
  for (std::filesystem::path directory = root; directory.has_relative_path();) {
    directory = directory.parent_path();
    const Result<struct stat> info = directory_stat(directory);
    if (!info) return Error{info.error()};
    if (const auto problem = ancestor_problem(*info, *child, caller_uid))
      return Error{shown(directory) + ": directory above the profile store " + *problem +
                   "; refusing its profiles"};
    child = info;
  }
  return Ok{};
}

// `inner` is `outer` or lies below it (both canonical).
bool lies_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<std::string> ownership_problem(const struct stat& info, uid_t caller_uid) {
  if (!trusted_owner(info.st_uid, caller_uid))
    return "is owned by uid " + std::to_string(info.st_uid) + ", not by root or the caller (uid " +
           std::to_string(caller_uid) + ")";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "is writable by group or others (mode " + mode_text(info.st_mode) + ")";
  return std::nullopt;
}

std::optional<std::string> ancestor_problem(const struct stat& info, const struct stat& child_info,
                                            uid_t caller_uid) {
  if (!trusted_owner(info.st_uid, caller_uid))
    return "is owned by uid " + std::to_string(info.st_uid) + ", not by root or the caller (uid " +
           std::to_string(caller_uid) + ")";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) == 0) return std::nullopt;
  if ((info.st_mode & S_ISVTX) == 0)
    return "is writable by group or others without the sticky bit (mode " + mode_text(info.st_mode) + ")";
  if (!trusted_owner(child_info.st_uid, caller_uid))
    return "is writable by group or others (mode " + mode_text(info.st_mode) +
           ") and the directory in it is owned by uid " + std::to_string(child_info.st_uid) +
           ", not by root or the caller (uid " + std::to_string(caller_uid) + ")";
  return std::nullopt;
}

Result<TrustedFile> read_trusted_file(const std::filesystem::path& store, const std::filesystem::path& file,
                                      uid_t caller_uid, std::size_t max_bytes) {
  std::error_code error;
  const std::filesystem::path root = std::filesystem::canonical(store, error);
  if (error) return Error{shown(store) + ": profile store cannot be resolved: " + error.message()};
  const std::filesystem::path real = std::filesystem::canonical(file, error);
  if (error) return Error{shown(file) + ": cannot be resolved: " + error.message()};
  if (real == root || !lies_within(real, root))
    return Error{shown(file) + ": resolves to " + shown(real) + ", outside the profile store " + shown(root)};

  // The directory holding the name (a symlink's, when `file` is one), every directory from the
  // real file up to the store root, then every directory above it.
  if (Status held_by = check_store_directory(file.parent_path(), caller_uid); !held_by)
    return Error{held_by.error()};
  for (std::filesystem::path directory = real.parent_path();; directory = directory.parent_path()) {
    if (Status checked = check_store_directory(directory, caller_uid); !checked)
      return Error{checked.error()};
    if (directory == root) break;
  }
  if (Status above = check_ancestors(root, caller_uid); !above) return Error{above.error()};

  // O_NONBLOCK: a FIFO put in its place must not hang the prolog before fstat refuses it.
  const Descriptor fd(::open(real.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return Error{shown(file) + ": cannot open: " + std::strerror(errno)};
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return Error{shown(file) + ": " + std::strerror(errno)};
  if (!S_ISREG(info.st_mode)) return Error{shown(file) + ": not a regular file"};
  if (const auto problem = ownership_problem(info, caller_uid))
    return Error{shown(file) + ": profile " + *problem + "; refusing it"};
  if (static_cast<std::uintmax_t>(info.st_size) > max_bytes)
    return Error{shown(file) + ": " + std::to_string(info.st_size) + " bytes, more than the " +
                 std::to_string(max_bytes) + " a profile may have"};

  TrustedFile trusted{real, std::string(static_cast<std::size_t>(info.st_size), '\0')};
  std::size_t length = 0;
  while (true) {  // up to one byte past max_bytes, in case it grew since fstat
    if (length == trusted.text.size())
      trusted.text.resize(std::min(trusted.text.size() * 2 + 4096, max_bytes + 1));
    const ssize_t got = ::read(fd.get(), trusted.text.data() + length, trusted.text.size() - length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{shown(file) + ": cannot read: " + std::strerror(errno)};
    if (got == 0) break;
    length += static_cast<std::size_t>(got);
    if (length > max_bytes)
      return Error{shown(file) + ": more than the " + std::to_string(max_bytes) +
                   " bytes a profile may have"};
  }
  trusted.text.resize(length);
  return trusted;
}

}  // namespace nccltune
