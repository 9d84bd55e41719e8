// A measured profile as the node-count tests need one: an all_reduce profile of `nodes` nodes of
// 2 GPUs measured from 8 B to 1 MiB, with `env` and `per_size`.
#pragma once

#include <utility>
#include <vector>

#include "profile/profile.h"

namespace nccltune::test_support {

inline Profile measured_profile(int nodes, Env env, std::vector<SizeChoice> per_size) {
  Profile p;
  p.shape.node_type_key = "h100-80gb-hbm3.2gpu.nvswitch.2xib400.pix.nccl2.28";
  p.shape.nodes = nodes;
  p.shape.gpus_per_node = 2;
  p.shape.ranks = 2 * nodes;
  p.shape.nccl_version = "2.28.9";
  p.env = std::move(env);
  CollectiveProfile& c = p.collectives["all_reduce"];
  c.measured = {8, 1048576};
  c.per_size = std::move(per_size);
  return p;
}

}  // namespace nccltune::test_support
