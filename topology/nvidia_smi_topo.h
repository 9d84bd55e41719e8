// Reader for the text of `nvidia-smi topo -m`: the offline source of link types between GPUs
// and NICs, and of each GPU's CPU and NUMA affinity.
#pragma once

#include <string_view>

#include "base/result.h"
#include "topology/node_topology.h"

namespace nccltune {

// Parses the text of `nvidia-smi topo -m`. `origin` names the file for error messages.
//
// Fills gpus (index, cpu_affinity, numa), nics (index, name from the "NIC Legend" block, numa
// when a NIC row gives one) and one link per pair of devices, with source nvidia_smi; GPU names
// and PCI addresses stay null, as does nvswitch: the text does not say them. Reads what real
// drivers print: tabs or spaces, padded " X " cells, NIC rows without affinity values, `SOC`
// (read as SYS), `N/A`, CRLF, ANSI escapes (or what is left of them), comment lines starting
// with '#'. An error is one line, "origin:line: what is wrong".
Result<NodeTopology> parse_nvidia_smi_topo(std::string_view text, std::string_view origin);

}  // namespace nccltune
