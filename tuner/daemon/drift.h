// Drift: how this scan differs from the last good state, in the ways that cost a job
// bandwidth or a rank: a GPU or NIC gone, a NIC port no longer ACTIVE, a PCIe link narrower or a
// NIC slower than before, a node type whose hardware changed (GPU model or count, NVSwitch,
// NVLinks, NIC count, kind or rate, GPU-NIC affinity). NCCL and CUDA driver versions are not
// drift: an upgrade is intended (nccltuned logs it and accepts it into the last good state).
// Additions and improvements are not drift.
// Pure: values in, values out; the daemon logs, records and exports what this returns.
#pragma once

#include <vector>

#include "node/node_state.h"

namespace nccltune {

// Kinds, as they appear in node.yaml's `drift:` and the metrics' `kind` label.
inline constexpr const char* kDriftKinds[] = {"gpu_missing",   "nic_missing",    "port_not_active",
                                              "link_narrower", "nic_rate_lower", "node_type_changed"};

// GPUs are matched by PCI address (by id when either side has none), NICs by verbs name (by id
// when unnamed). A fact unknown on either side (a degraded source) is not drift.
std::vector<DriftEntry> compare_with_last_good(const NodeState& last_good, const NodeState& current);

}  // namespace nccltune
