#include "store_permissions.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "printable_text.h"
#include "status.h"

namespace nccltune {

namespace {

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string shown(const std::filesystem::path& path) { return printable_excerpt(path.native(), 200); }

Result<struct stat> stat_of(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return Error{shown(path) + ": " + std::strerror(errno)};
  return info;
}

Status check_directory(const std::filesystem::path& directory, uid_t caller_uid) {
  const Result<struct stat> info = stat_of(directory);
  if (!info) return Error{info.error()};
  if (!S_ISDIR(info->st_mode)) return Error{shown(directory) + ": not a directory"};
  if (const auto problem = ownership_problem(*info, caller_uid))
    return Error{shown(directory) + ": store directory " + *problem + "; refusing its profiles"};
  return Ok{};
}

// `inner` is `outer` or lies below it (both canonical).
bool lies_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
}

}  // namespace

std::optional<std::string> ownership_problem(const struct stat& info, uid_t caller_uid) {
  if (info.st_uid != 0 && info.st_uid != caller_uid)
    return "is owned by uid " + std::to_string(info.st_uid) + ", not by root or the caller (uid " +
           std::to_string(caller_uid) + ")";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "is writable by group or others (mode " + mode_text(info.st_mode) + ")";
  return std::nullopt;
}

Result<std::filesystem::path> trusted_profile_path(const std::filesystem::path& store,
                                                   const std::filesystem::path& file, uid_t caller_uid) {
  std::error_code error;
  const std::filesystem::path root = std::filesystem::canonical(store, error);
  if (error) return Error{shown(store) + ": profile store cannot be resolved: " + error.message()};
  const std::filesystem::path real = std::filesystem::canonical(file, error);
  if (error) return Error{shown(file) + ": cannot be resolved: " + error.message()};
  if (real == root || !lies_within(real, root))
    return Error{shown(file) + ": resolves to " + shown(real) + ", outside the profile store " + shown(root)};

  const Result<struct stat> info = stat_of(real);
  if (!info) return Error{info.error()};
  if (!S_ISREG(info->st_mode)) return Error{shown(file) + ": not a regular file"};
  if (const auto problem = ownership_problem(*info, caller_uid))
    return Error{shown(file) + ": profile " + *problem + "; refusing it"};

  // The directory holding the name (a symlink's, when `file` is one), then every directory from
  // the real file up to the store root.
  if (Status held_by = check_directory(file.parent_path(), caller_uid); !held_by) return Error{held_by.error()};
  for (std::filesystem::path directory = real.parent_path();; directory = directory.parent_path()) {
    if (Status checked = check_directory(directory, caller_uid); !checked) return Error{checked.error()};
    if (directory == root) break;
  }
  return real;
}

}  // namespace nccltune
