// What NCCL last said of this node type's network: the newest profile in the store for its key
// (any node count) that recorded NCCL's own account (provenance.nccl_observed), as nccltuned
// exports it: the transport, the network devices NCCL used and GPUDirect RDMA per connection.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/nccl_observed.h"

namespace nccltune {

struct ObservedNetwork {
  std::filesystem::path file;   // the profile it comes from
  std::string date;             // its provenance.date
  // The world's (never a rail's or a node's: provenance.nccl_observed.comms), under the env that
  // profile ships (the defaults' when it keeps them).
  NcclObservation observation;
};

// Profiles that cannot be read or trusted are skipped, each with a line in `warnings`. nullopt
// when no profile of the key recorded NCCL's account.
std::optional<ObservedNetwork> newest_observed_network(const std::filesystem::path& store,
                                                       std::string_view key, uid_t uid,
                                                       std::vector<std::string>& warnings);

}  // namespace nccltune
