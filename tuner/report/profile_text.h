// How a profile's choices and numbers read, the same in every renderer of it (`show`, its
// end-of-tune lines, `report`, `report --summary`, `diff`): ranges, algorithm/protocol pairs,
// ratios, busbw and what ships.
#pragma once

#include <string>
#include <string_view>

#include "profile/profile.h"
#include "profile/size_ranges.h"

namespace nccltune {

// "Tree/LL", "Ring/NCCL's" ... : algo/proto with "auto" for NCCL's own choice, and the channels
// when set ("Ring/Simple, 16 channels").
std::string describe_choice(const SizeChoice& choice);

// A range as "0 .. <512K", "8M .. 16G": the exclusive end when it is a round size.
std::string describe_range(const SizeChoice& choice);

// The sizes above the measured range, as show and the report mark them: "above 1M"; "" when the
// profile does not say what it measured.
std::string describe_unmeasured(const CollectiveProfile& collective);
inline constexpr std::string_view kUnmeasuredChoice = "not measured: NCCL's own choice";

// A ratio with three decimals and "x" ("1.069x"), or "n/a" when it is not finite.
std::string format_speedup(double ratio);

// busbw in GB/s with two decimals ("370.20"), or "n/a" when it is not finite.
std::string format_busbw(double gbps);

// What the profile's env ships, in one phrase: "NCCL_ALGO=Ring NCCL_PROTO=LL128", "NCCL's
// defaults (nothing beat them beyond the noise floor)" or "no variables".
std::string describe_ships(const Profile& profile);

// A setting withheld from env and why: "NCCL_ALGO=Tree: rail (2 nodes x 1): all_reduce -20% at 1M".
std::string describe_withheld(const WithheldSetting& withheld);

}  // namespace nccltune
