// Which nodes share an NVLink domain (a GB200/GB300 NVL72 rack: trays of GPUs on one multi-node
// NVLink fabric), as NCCL sees it. NCCL counts a communicator whose ranks are all in one domain as
// one node and runs it over NVLink ("nNodes 1 ... MNNVL 1"); one that spans domains runs over the
// network between them. So a pair that NCCL counted so is an NVLink pair, and its two nodes are
// in one domain; so are nodes that alone name the same fabric (UUID and clique id: NCCL's
// own rule for a clique, src/mnnvl.cc). Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/fleet_survey.h"

namespace nccltune {

// NCCL ran the pair's communicator over multi-node NVLink: one node by its count, MNNVL on.
bool is_nvlink_pair(const GroupSample& pair);

struct NvlinkDomains {
  std::vector<int> of_node;        // by node index: its domain's index; empty when none is known
  std::vector<std::string> names;  // by domain index
  bool known() const { return !names.empty(); }
  // "" when no domain is known.
  const std::string& name_of(int node) const;
};

// Domains are known only when some pair ran over NVLink (else the fleet has none worth naming:
// every pair crossed the network). Then every node has one: the nodes its NVLink pairs and its
// fabric join it with, numbered by their lowest node. A domain's name is its clique id
// ("clique 0x7ffe") when its nodes named one fabric and no other domain has that clique id, else
// "domain N" for every domain (N from 0, by lowest node). Groups naming a node outside 0..nodes-1
// are ignored.
NvlinkDomains nvlink_domains(std::size_t nodes, const std::vector<GroupSample>& local,
                             const std::vector<GroupSample>& pairs);

}  // namespace nccltune
