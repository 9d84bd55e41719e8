// The node diagram of the HTML report, as inline SVG: NUMA nodes side by side, the PCIe switches
// inside them with their GPUs and NICs, each GPU's nearest NIC and link type, and the NVLink
// fabric (an NVSwitch bar, or arcs between directly linked GPUs). Pure: topology in, markup out.
#pragma once

#include <string>

#include "topology/node_topology.h"

namespace nccltune {

// Every name from the topology is escaped; long names are cut on the tile and kept whole in its
// tooltip. A topology without GPUs and NICs gives a small diagram that says so.
std::string render_node_diagram(const NodeTopology& topology);

}  // namespace nccltune
