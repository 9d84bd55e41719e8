// Where NCCL trusts LL128 by default (FIDELITY.md F37): protoEnable's 2 for LL128 in
// ncclTopoTuneModel (src/graph/tuning.cc) becomes 1 per algorithm only when its graph's path types
// and the GPUs' compute capabilities allow it. The path types come from the model's `paths` (what
// NCCL's topology search reports on the node), moved as NCCL moves them by NCCL_P2P_DISABLE,
// NCCL_P2P_LEVEL, NCCL_PXN_DISABLE and a network without GPUDirect RDMA (src/graph/paths.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fake_model.h"
#include "nccl_env.h"

namespace nccltune::fake {

// NCCL's path types (src/graph/topo.h, topoPathTypeStr): LOC 0, NVL 1, NVB 2, C2C 3, PIX 4,
// PXB 5, P2C 6, PXN 7, PHB 8, SYS 9. nullopt for any other name (case counts, as NCCL's strcmp).
std::optional<int> nccl_path_type(std::string_view name);
std::string_view nccl_path_name(int type);

// The communicator's graph path types as NCCL's search leaves them (ncclTopoCompute,
// src/graph/search.cc): `intra` between its GPUs on a node (LOC with one GPU per node), `inter`
// from a GPU to the NIC (PIX, the search's floor, on one node, where there is no network).
struct GraphPaths {
  int intra = 0;
  int inter = 4;
};
GraphPaths graph_paths(const FakeModel& model, const NcclEnv& env, int nodes, int local_ranks);

// Why NCCL leaves LL128 off by default on this communicator ("" where it trusts it). Ring, Tree
// and PAT each have a graph of their own in NCCL, but on one node's topology the fake gives them
// the same types, so the answer holds for every algorithm that runs LL128. `ll128_default: false`
// in the model also leaves it off (a platform fact the model states).
std::string why_ll128_untrusted(const FakeModel& model, const NcclEnv& env, int nodes, int local_ranks);

}  // namespace nccltune::fake
