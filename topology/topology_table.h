// The matrix people know from `nvidia-smi topo -m`, plus each device's PCIe link and the
// nearest NIC of each GPU.
#pragma once

#include <string>

#include "topology/node_topology.h"

namespace nccltune {

std::string render_topology_table(const NodeTopology& topology);

// "Gen5 x16", or "Gen1 x16 (max Gen5 x16) *" when the link runs below its maximum; "-" unknown.
std::string pcie_link_text(const PcieLink& link);

}  // namespace nccltune
