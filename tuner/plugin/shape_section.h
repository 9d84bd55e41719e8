// Which measured communicator shape of a profile serves one communicator (profile v3,
// profile/profile.h: the world, the rails, the nodes). A job makes many communicators, and the
// world's section fits only those with the profile's GPUs per node; a rail (one rank per node) or
// a tensor-parallel group inside a node gets the section measured on its own shape: the same
// ranks per node and the same node count (any one-node communicator, the one-node section). NCCL's
// own rules differ with both (NVLS needs 2+ ranks on a node and one node, PAT one rank per node).
#pragma once

#include <optional>
#include <string>

#include "node/job_shape.h"
#include "profile/profile.h"

namespace nccltune {

// `profile` as served to a communicator of `job`'s shape from one of its sections other than
// the world: its collectives are that section's (and it has no other sections); nullopt when no
// such section has the communicator's ranks per node and node count.
struct ServedSection {
  Profile profile;
  std::string label;  // describe_section's: "rail: 2 nodes x 1 rank"
};
std::optional<ServedSection> section_for_communicator(const Profile& profile, const JobShape& job);

// "world: 2 nodes x 8 ranks; rail: 2 nodes x 1 rank": every shape a profile measured.
std::string measured_shapes_text(const Profile& profile);

}  // namespace nccltune
