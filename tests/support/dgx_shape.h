// The shape facts of DGX-H100-like nodes (8 H100 GPUs on NVSwitch, 8 NICs, NCCL 2.28.9), which the
// search-space and strategy tests and the strategy benchmark prune and search for.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "search/search_space.h"

namespace nccltune::test_support {

// `collectives`: what is tuned (tune --ops); empty, unknown, and every collective condition holds.
inline ShapeFacts dgx_h100_facts(int nodes, std::vector<std::string> collectives = {}) {
  ShapeFacts facts;
  facts.collectives = std::move(collectives);
  facts.nodes = nodes;
  facts.gpus_per_node = 8;
  facts.nvswitch = true;
  facts.nics = 8;
  facts.nccl_version = 22809;
  facts.gpu_sm = 90;
  return facts;
}

}  // namespace nccltune::test_support
