// Which ranks NCCL counts as one node on multi-node NVLink (GB200/GB300 NVL72 racks; FIDELITY.md
// F18, F24, F25). NCCL runs its MNNVL check (ncclMnnvlCheck, src/mnnvl.cc) when a communicator's
// ranks sit on more than one host, NCCL_MNNVL_ENABLE is not 0 and P2P is not disabled, or when
// NCCL_MNNVL_ENABLE is 1 (initTransportsRank, src/init.cc). On a fabric (the model's `mnnvl`) a
// rank's clique is the communicator's ranks in its NVLink domain, and MNNVL is on when the clique
// holds 2 or more. Then NCCL fuses the clique's topologies (ncclTopoGetSystem, src/graph/topo.cc):
// the domain is the node, its ranks the local ranks, and nNodes counts domains. Off a fabric, or
// unchecked, nodes are hosts. Off a fabric NCCL's check finds nothing and says nothing, whatever
// NCCL_MNNVL_ENABLE says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fake_model.h"
#include "nccl_env.h"

namespace nccltune::fake {

// One rank's MNNVL as NCCL's INFO lines show it.
struct MnnvlPlace {
  bool fabric = false;   // the model has a fabric: every rank prints fillInfo's fabric line
  bool enabled = false;  // comm->MNNVL
  int domain = 0;        // the rank's NVLink domain (emulated host index / hosts_per_domain)
  int clique_size = 0;   // the communicator's ranks in that domain
  int clique_rank = 0;   // this rank's place among them
};

// What NCCL groups each rank of a communicator by ("host <name>" or "domain <d>"), and this rank's
// MNNVL.
struct NcclNodeKeys {
  std::vector<std::string> node_of_rank;
  MnnvlPlace mnnvl;
};

// P2P disabled as ncclGetUserP2pLevel reads it (src/graph/paths.cc): NCCL_P2P_DISABLE is 1, else
// NCCL_P2P_LEVEL names LOC (the path name, or 0 in the old numbering).
bool p2p_disabled(const NcclEnv& env);

// Whether NCCL runs its MNNVL check on a communicator whose ranks are not all on one host
// (`several_hosts`): NCCL_MNNVL_ENABLE (an integer parameter, default 2) 1, or not 0 with several
// hosts and P2P not disabled.
bool mnnvl_checked(const NcclEnv& env, bool several_hosts);

// Each rank's grouping and `rank`'s MNNVL, for ranks on `host_of_rank` whose emulated host indexes
// are `host_index` (nccl_debug.h, emulated_node_indexes).
NcclNodeKeys nccl_node_keys(const std::vector<std::string>& host_of_rank, const std::vector<int>& host_index,
                            int rank, const std::optional<MnnvlModel>& fabric, const NcclEnv& env);

// "" when `emulated_hosts` fills whole domains, else the line that says it does not, naming the
// model file and the field.
std::string domain_layout_problem(const MnnvlModel& fabric, const std::string& file, int emulated_hosts);

// NVML's cluster UUID of `domain` as NCCL prints it ("%lx.%lx"), one per domain, never zero (a
// zero UUID is no fabric to NCCL).
std::string fabric_uuid(int domain);
// NVML's cliqueId on every GPU of the fake's fabric: one clique per domain.
inline constexpr std::uint32_t kFabricCliqueId = 0x7fff;

}  // namespace nccltune::fake
