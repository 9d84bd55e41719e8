// libibverbs adapter: the HCAs verbs finds on the live machine, with port state, link layer
// and active rate. Snapshots replay the same facts from sysfs (where verbs reads them).
#pragma once

#include <vector>

#include "topology/sources/sysfs_source.h"

namespace nccltune {

// Empty when verbs finds no device (no RDMA hardware, or no provider installed).
std::vector<RdmaDevice> read_ibverbs_devices();

// Per-lane Gb/s of an `ibv_port_attr.active_speed` code times the lanes of `active_width`.
double ib_rate_from_verbs(int active_speed, int active_width);

}  // namespace nccltune
