// `nccltune show PROFILE`: a profile as people read it on a terminal: the shape, the env, the
// per-size choices, busbw per size against the defaults, how it was found and what failed. A
// renderer of the profile's view (profile_view.h), as tune's closing lines are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// NCCL's own model next to what was measured, for the collective `name`: the busbw NCCL's model
// predicts (its asymptote, latency left out) for the pair NCCL chose under the defaults at the
// largest measured size it logged, and the defaults' busbw measured there: "NCCL's model:
// RING/SIMPLE 48.00 GB/s predicted at large sizes (...); measured under the defaults at 1G: 45.20
// GB/s (94%)". "" when the profile lacks the model, NCCL's choice there or the measurement.
std::string describe_nccl_model(const Profile& profile, const std::string& name,
                                const CollectiveProfile& collective);

// Profiles passed strict parsing, so their text has no control characters to reach a terminal.
// A v3 profile's world collectives come under a "world: 2 nodes x 8 ranks" heading, then each
// other communicator shape's under its own ("rail: 2 nodes x 1 rank"), and a `withheld` line per
// setting withheld from env; a v1 or v2 profile renders as it always has.
// `stored_counts`: the node counts the store holds for this node type (beside the file); listed
// when there are others than this one.
std::string render_profile_summary(const Profile& profile, std::string_view origin,
                                   const std::vector<int>& stored_counts = {});

}  // namespace nccltune
