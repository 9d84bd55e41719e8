// `nccltune show PROFILE`: a profile as people read it on a terminal: the shape, the env, the
// per-size choices, busbw per size against the defaults, how it was found and what failed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profile.h"

namespace nccltune {

// The per-size choice whose range holds `bytes`, or nullptr.
const SizeChoice* choice_for_size(const std::vector<SizeChoice>& per_size, std::uint64_t bytes);

// "Tree/LL", "Ring/NCCL's" ... : algo/proto with "auto" for NCCL's own choice, and the channels
// when set ("Ring/Simple, 16 channels").
std::string describe_choice(const SizeChoice& choice);

// A range as "0 .. <512K", "8M .. 16G": the exclusive end when it is a round size.
std::string describe_range(const SizeChoice& choice);

// Profiles passed strict parsing, so their text has no control characters to reach a terminal.
std::string render_profile_summary(const Profile& profile, std::string_view origin);

}  // namespace nccltune
