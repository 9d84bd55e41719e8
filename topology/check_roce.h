// The RoCE part of `nccltune check`: each RoCE NIC NCCL is told to use has a RoCE v2 GID with an
// IPv4 address, the same index on every NIC (NCCL_IB_GID_INDEX is one value for all), and an
// interface MTU that gives RoCE its full 4096-byte path MTU.
#pragma once

#include <vector>

#include "topology/checks.h"

namespace nccltune {

// `nics`: the indexes of the NICs recommended for NCCL_IB_HCA; their RoCE ports are checked.
// Adds findings, and NCCL_IB_GID_INDEX to the recommendations when the ports agree on it.
void check_roce(const NodeTopology& topology, const std::vector<int>& nics, CheckReport& report);

}  // namespace nccltune
