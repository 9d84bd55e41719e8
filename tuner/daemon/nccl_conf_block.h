// The block nccltuned keeps in /etc/nccl.conf (opt-in, daemon.nccl_conf.manage): NAME=value lines
// between two marker lines. Everything outside the markers is the admin's and is kept byte for
// byte. Pure: text in, text out; the daemon reads and writes the file.
#pragma once

#include <string>
#include <string_view>

#include "result.h"

namespace nccltune {

inline constexpr std::string_view kNcclConfBegin =
    "# BEGIN nccltuned (managed block: edits between these lines are overwritten)";
inline constexpr std::string_view kNcclConfEnd = "# END nccltuned";

// `existing` with the marked block's body replaced by `body` (lines ending in '\n'); the block is
// appended when there is none and removed when `body` is empty. Errors, leaving the file to the
// admin: a BEGIN without END (or the reverse), or more than one block. `origin` names the file.
Result<std::string> update_nccl_conf_block(std::string_view existing, std::string_view body,
                                           std::string_view origin);

}  // namespace nccltune
