// The communicator shapes' vocabulary (`parse_comms` for tune --comms, the roles, ShapedOp) is
// profile/comm_shape.h, where the search, the profile and its readers all reach it; this header
// only keeps the include of callers that still name it.
#pragma once

#include "profile/comm_shape.h"
