// Hosts whose network is the likely cause, from a job's communicators, in the fleet survey's
// terms (fleet_attribution.h: a node slow in every one of two or more network pairs is a
// "network" suspect): a host is a suspect when every network communicator it is in (nnodes > 1,
// two or more judged) is slow while every NVLink one (nnodes 1, one or more judged) is not, and
// not every host of the job's network communicators reads so (then it is the network or the
// profile for all of them, which the rows' verdicts say, not a host). A row is slow below
// (1 - tolerance) of the profile's busbw, or below kSuspectPeerRatio of the median of the same
// collective and size on the other communicators of its shape (same n_ranks and nnodes: the
// same shape on other hosts); a communicator is slow when more than half of its judged rows are.
#pragma once

#include <string>
#include <vector>

#include "observe/observe_report.h"

namespace nccltune {

inline constexpr double kSuspectPeerRatio = 0.75;

std::vector<ObserveSuspect> find_host_suspects(const std::vector<ObserveCommunicatorReport>& communicators,
                                               double tolerance);

}  // namespace nccltune
