// From NCCL's log to what a profile keeps of it (profile/nccl_observed.h): the facts of one env's
// trials, and explain's verdicts in the profile's terms. Pure functions.
#pragma once

#include <vector>

#include "collectives/nccl_info_log.h"
#include "profile/nccl_observed.h"
#include "tune/nccl_log_verdicts.h"

namespace nccltune {

NcclObservation observation_from_log(const NcclInfoLog& log);

std::vector<ObservedVerdict> observed_verdicts(const std::vector<LogVerdict>& verdicts);

}  // namespace nccltune
