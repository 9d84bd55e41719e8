// How a profile's choices and numbers read, the same in every renderer of it (`show`, its
// end-of-tune lines, `report`, `report --summary`, `diff`): ranges, algorithm/protocol pairs,
// ratios, busbw and what ships.
#pragma once

#include <string>
#include <string_view>

#include "profile/profile.h"
#include "profile/size_ranges.h"
#include "report/profile_view.h"

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

// A size where no grid puts it (a switch between measured sizes): "1M", "1.25M" when that is
// exact, else "~1.1M" (three digits at most, of the largest unit it reaches); bytes below 1K as
// they are. format_byte_size would print 1152000.
std::string format_size_near(std::uint64_t bytes);

// One fit of NCCL's cost model, time = latency + bytes / bandwidth: "5.0 us + 16.0 GB/s" (the
// bandwidth as bytes over time, algbw, not busbw); "5.0 us, flat" for a fit without bandwidth.
std::string describe_cost_fit(double latency_us, double gbps);

// Where a choice switches and why, as show, the report and tune's closing lines print it:
// "Tree/LL128 -> Ring/LL128 at ~1.1M, where the fitted costs cross (measured faster: Tree/LL128
// at 1M, Ring/LL128 at 1.25M; fits: Tree/LL128 5.0 us + 16.0 GB/s, Ring/LL128 50.0 us + 42.7
// GB/s)"; without a crossing "Ring/LL128 -> NVLS/Simple at 1M, as measured: the fitted costs do
// not cross in between (outside-bracket; measured faster: ...; fits: ...)". Ends in "; per_size no
// longer changes range there" when it does not (SwitchView::in_per_size).
std::string describe_switch(const SwitchView& view);

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
