// GPU-NIC affinity: which NIC serves each GPU.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/node_topology.h"

namespace nccltune {

struct NicAssignment {
  int gpu = 0;
  std::optional<int> nic;  // nullopt when the node has no NIC or no link is known
  std::optional<LinkType> link;
  bool numa_decided = false;  // the PCI tree could not tell; the NUMA node did
};

// The nearest NIC of each GPU. Through a PCIe switch (PIX/PXB) the tree decides; beyond it
// (PHB/NODE/SYS: VMs that flatten the tree, Grace trays where every NIC is SYS) a NIC on the
// GPU's own NUMA node wins. Ties go to the NIC serving the fewest GPUs so far, then the lowest
// index, so GPU pairs on a two-NIC switch get one NIC each.
std::vector<NicAssignment> assign_nearest_nics(const NodeTopology& topology);

// {"GPU0": "NIC0", ...} for the JSON contract.
std::map<std::string, std::string> nearest_nic_map(const std::vector<NicAssignment>& assignments);

}  // namespace nccltune
