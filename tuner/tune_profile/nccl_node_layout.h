// How NCCL counts the nodes of the hosts a tune runs on. On HGX systems NCCL's node is the host.
// On a multi-node NVLink system (GB200/GB300 NVL72: MNNVL) it is the NVLink domain: NCCL fuses
// the topologies of a fabric clique's hosts and counts distinct ring first ranks, so 4 trays of
// one rack are 1 node of 16 local ranks ("comm ... nRanks 16 nNodes 1 localRanks 16 ... MNNVL 1"),
// and that is what a tuner plugin's init gets. A profile is written, stored and served in NCCL's
// terms (profile.h, ProfileShape::hosts); this is where the tune learns them, from the world
// communicator's INFO lines.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "profile/profile.h"

namespace nccltune {

struct NcclNodeLayout {
  int hosts = 1;           // the tune's hosts (emulated ones included)
  int ranks_per_host = 1;  // one rank per GPU
  int nodes = 1;           // NCCL's count: hosts, or NVLink domains with MNNVL
  bool mnnvl = false;      // NCCL said MNNVL 1 for the world

  int ranks() const { return hosts * ranks_per_host; }
  int ranks_per_node() const { return ranks() / nodes; }
  int hosts_per_node() const { return hosts / nodes; }
  bool operator==(const NcclNodeLayout&) const = default;
};

// The layout from what the world's log said: `nccl_nodes` (the comm line's nNodes) and `mnnvl`
// (its MNNVL). Without MNNVL, or when the log did not say, NCCL's node is the host (a log that
// says another count without MNNVL is an error: NCCL counts hosts there). With MNNVL, NCCL's
// count must divide the hosts (domains of equal size, as a tune over whole trays makes them).
// Errors are one line naming what NCCL said.
Result<NcclNodeLayout> nccl_node_layout(int hosts, int ranks_per_host, std::optional<int> nccl_nodes,
                                        std::optional<bool> mnnvl);

// NCCL's count for the first `hosts` hosts of a tune whose whole world NCCL counted as `whole`
// (`tune --node-counts`), until their own trials' log says it. One host is one node without MNNVL
// (NCCL checks MNNVL only across hosts); with MNNVL, hosts inside one NVLink domain are one node,
// whole domains one node each, and anything else is an error naming --node-counts.
Result<NcclNodeLayout> subset_layout(int hosts, const NcclNodeLayout& whole);

// The layout as a profile's shape counts it (nodes, gpus_per_node, ranks; hosts and mnnvl for an
// MNNVL one), the rest of the shape empty: what the profile is written in, and what
// nccl_shape_in (profile.h) says each communicator shape is.
ProfileShape nccl_counts(const NcclNodeLayout& layout);


}  // namespace nccltune
