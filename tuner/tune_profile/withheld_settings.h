// The settings a tune over several communicator shapes withholds from env: env is process-wide, so
// a setting ships only when no measured shape and no tuned collective is slower under it; one that
// won somewhere and lost elsewhere is named in the profile's `withheld`, with where it lost. Read
// from the screen of one setting at a time against the defaults' repeats (the strategy's own
// trials, search/strategy.h), each point keyed by its collective and communicator (trial.h's point_op).
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/trial.h"
#include "tune_profile/nccl_node_layout.h"

namespace nccltune {

// One screened env and its measurement (points of every shape, each naming its communicator).
struct ScreenedEnv {
  Env env;
  TrialMeasurement measured;
};

// Each screened env not in `shipped` that beat the defaults on some shape beyond `noise` (the
// geometric mean of its points there) and lost more than `tolerance` at some point of a collective
// on a shape, the worst loss as why: "rail (2 nodes x 1): all_reduce -20% at 1M; +31% on world".
// One per variable (its value that gained most), in the order of the variables' names. The
// defaults' points are the mean of `baselines` at each (collective, shape, size). `layout` is the
// job's, as NCCL counts its nodes: the shapes are said in NCCL's terms (nccl_shape_in).
std::vector<WithheldSetting> withheld_settings(const std::vector<TrialMeasurement>& baselines,
                                               const std::vector<ScreenedEnv>& screened, const Env& shipped,
                                               const NcclNodeLayout& layout, double noise, double tolerance);

}  // namespace nccltune
