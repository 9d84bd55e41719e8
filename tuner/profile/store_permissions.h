// Whether a profile in the store may be trusted, as sshd's StrictModes decides for
// authorized_keys: the profile and every directory from it up to the store root must be owned by
// root or by the caller and not writable by group or others; every directory above the store root
// up to / must be owned by root or the caller and, when writable by group or others, be sticky
// (like /tmp) with the next directory down owned by root or the caller. The profile must be a
// regular file whose real path lies inside the store, and it is read through the descriptor that
// was checked. Anyone who could write there could otherwise set NCCL_* variables in every job that
// reads the store.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "base/result.h"

namespace nccltune {

// What is wrong with one file or directory's owner and mode for `caller_uid`, or nullopt.
std::optional<std::string> ownership_problem(const struct stat& info, uid_t caller_uid);

// What is wrong with a directory above the store root (`info`) holding `child_info`, or nullopt:
// owner root or the caller; group or other write only with the sticky bit, and then the child
// must be owned by root or the caller (nobody else can rename it away).
std::optional<std::string> ancestor_problem(const struct stat& info, const struct stat& child_info,
                                            uid_t caller_uid);

struct TrustedFile {
  std::filesystem::path real;  // the profile's real path
  std::string text;            // its content, read from the checked descriptor
};

// The profile `file` (under `store`) when it and every directory above it pass the checks: opened
// with O_NOFOLLOW, then fstat of that descriptor (a regular file, owner, mode, at most max_bytes)
// and the content read from it. Otherwise one line naming the path and what is wrong.
Result<TrustedFile> read_trusted_file(const std::filesystem::path& store, const std::filesystem::path& file,
                                      uid_t caller_uid, std::size_t max_bytes);

}  // namespace nccltune
