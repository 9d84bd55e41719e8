// The shape facts of DGX-H100-like nodes (8 H100 GPUs on NVSwitch, 8 NICs, NCCL 2.28.9), which the
// search-space and strategy tests and the strategy benchmark prune and search for.
#pragma once

#include "search/search_space.h"

namespace nccltune::test_support {

inline ShapeFacts dgx_h100_facts(int nodes) {
  ShapeFacts facts;
  facts.nodes = nodes;
  facts.gpus_per_node = 8;
  facts.nvswitch = true;
  facts.nics = 8;
  facts.nccl_version = 22809;
  facts.gpu_sm = 90;
  return facts;
}

}  // namespace nccltune::test_support
