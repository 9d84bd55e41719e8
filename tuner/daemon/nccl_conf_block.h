// The block nccltuned keeps in /etc/nccl.conf (opt-in, daemon.nccl_conf.manage): NAME=value lines
// between two marker lines. Everything outside the markers is the admin's and is kept byte for
// byte. update_nccl_conf_block is pure (text in, text out); write_nccl_conf replaces the file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nccltune {

inline constexpr std::string_view kNcclConfBegin =
    "# BEGIN nccltuned (managed block: edits between these lines are overwritten)";
inline constexpr std::string_view kNcclConfEnd = "# END nccltuned";

// `existing` with the marked block's body replaced by `body` (lines ending in '\n'); the block is
// appended when there is none and removed when `body` is empty. Errors, leaving the file to the
// admin: a BEGIN without END (or the reverse), or more than one block. `origin` names the file.
Result<std::string> update_nccl_conf_block(std::string_view existing, std::string_view body,
                                           std::string_view origin);

// Replaces `file` by rename (a reader never sees half of it), keeping its mode and owner (0644 for
// a new file). A symbolic link (config management's, perhaps) is refused, not replaced by a
// regular file; so is anything else that is not a regular file. Errors name the file.
Status write_nccl_conf(const std::filesystem::path& file, std::string_view content);
// The error for a symbolic link at `file`, also given before reading through one.
std::string nccl_conf_symlink_refused(const std::filesystem::path& file);

}  // namespace nccltune
