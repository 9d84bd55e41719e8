// What a job of a node count that was not measured gets from the profiles of the counts that were
// (the serving rule; README, "Every job size"). Which algorithm and protocol are best depends on
// the node count: a ring's latency grows with its ranks, a tree's with the log of its nodes, so
// NCCL itself moves from rings to trees as jobs grow. So:
// - settings whose effect does not depend on the node count (transport: GDR level, QPs, NICs,
//   cross-NIC, PXN, buffer sizes) come from the nearest measured count;
// - every other setting (NCCL_ALGO, NCCL_PROTO, channel bounds, ...) and the per-size choices
//   are kept only where the measured counts on both sides of the job agree on them, and are
//   withheld above the largest and below the smallest measured count, so that NCCL's own choice
//   stands there.
// Which settings are transport is is_transport_setting (profile/nccl_names.h). Pure: the store
// lookup that finds the two sides is profile_for_job's.
//
// Node counts are NCCL's, and the rule weighs only profiles of one layout (profile_store.h,
// StoreLayout): the host-counted <N>n.yaml among themselves, and on a multi-node NVLink system
// (GB200/GB300 NVL72, where NCCL's node is an NVLink domain) the <N>n<H>h.yaml whose domains have
// as many hosts (1n4h, 2n8h, 4n16h: domains of 4 hosts) among themselves. A domain of 4 hosts is
// another NCCL node than one of 2 (twice the ranks on NVLink), and either another than a host, so
// the rule never serves one from the other; and as one node and several, one domain and several
// never stand in for each other (NVLink alone against NVLink and the network).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// A measured profile around the job: its node count and where it came from.
struct MeasuredCount {
  const Profile* profile = nullptr;
  std::string source;  // the file, for the output's comments
};

struct ServedProfile {
  Profile profile;                    // what the job gets: env and per_size after the rule
  std::vector<std::string> sources;   // the profiles used, the nearest first
  std::vector<std::string> withheld;  // one line per setting or per-size range left to NCCL, and why
};

// For a job of `nodes` nodes that no profile was measured for: `below` and `above` are the
// nearest measured counts on each side (either may be missing, not both); `nearest` says which
// one gives the transport settings and the rest of the profile (shape, results). Its
// shape.nodes stays the measured count it came from.
ServedProfile serve_unmeasured_count(int nodes, const MeasuredCount& below, const MeasuredCount& above,
                                     bool nearest_is_below);

}  // namespace nccltune
