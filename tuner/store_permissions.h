// Whether a profile in the store may be trusted, as sshd's StrictModes decides for
// authorized_keys: the profile and every directory from it up to the store root must be owned by
// root or by the caller and not writable by group or others, and the profile must be a regular
// file whose real path lies inside the store. Anyone who could write there could otherwise set
// NCCL_* variables in every job that reads the store.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "result.h"

namespace nccltune {

// What is wrong with one file or directory's owner and mode for `caller_uid`, or nullopt.
std::optional<std::string> ownership_problem(const struct stat& info, uid_t caller_uid);

// The real path of `file` (a profile under `store`) when it and the directories above it up to
// the store root pass the checks; otherwise an error naming the path and what is wrong.
Result<std::filesystem::path> trusted_profile_path(const std::filesystem::path& store,
                                                   const std::filesystem::path& file, uid_t caller_uid);

}  // namespace nccltune
