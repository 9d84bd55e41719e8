// A NodeTopology as an NCCL topology file: the XML that NCCL writes with NCCL_TOPO_DUMP_FILE and
// reads with NCCL_TOPO_FILE (`topo --format nccl-xml`), so an admin can hand NCCL a corrected
// topology or diff what nccltune sees with what NCCL detects.
#pragma once

#include <string>

#include "topology/node_topology.h"

namespace nccltune {

// `<system version="1">` with one `<cpu numaid>` per NUMA node, the PCIe switches nested as NCCL
// nests them (one `<pci>` per switch, its upstream port), GPUs as `<pci><gpu>` and RDMA NICs as
// their `<pci>` alone: NCCL adds a NIC's `<nic><net>` from its net plugin, and a `<net>` already
// in the file would stop it from completing the NIC's `<pci>` and `<cpu>` (src/graph/xml.cc,
// ncclTopoFillNet), which fails NCCL's init on a `<cpu>` holding only NICs. Attributes nccltune
// does not know are left out: when it loads a file, NCCL fills in what is missing from the
// machine it runs on (sysfs, NVML, the net plugin). Every value is XML-escaped; a value XML or
// NCCL's reader cannot hold is left out.
std::string nccl_topo_xml(const NodeTopology& topology);

}  // namespace nccltune
