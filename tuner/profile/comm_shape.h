// The communicators a job makes, as one vocabulary for the search, the profile and its readers
// (docs/ARCHITECTURE.md, "Shapes in one worker"): a role (the world, a rail, a node), the shape
// it has in a job, and a collective on it. The worker and NCCL never see more than the role's
// name (TrialRequest::comms); a profile writes each shape as a section (profile.h).
#pragma once

#include <array>
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

// The communicators a job makes: the world (every rank), a rail (one rank per node, as data
// parallelism makes them) and a node (the ranks of one node, as tensor parallelism makes them).
// In this order the worker splits and sweeps them.
enum class CommRole { world, rail, node };
inline constexpr std::array<CommRole, 3> kCommRoles{CommRole::world, CommRole::rail, CommRole::node};
inline constexpr std::string_view kWorldComm = "world";
std::string_view to_string(CommRole role);                       // "world", "rail", "node"
std::optional<CommRole> parse_comm_role(std::string_view name);  // nullopt for anything else

// `tune --comms`: "world,rail,node" (each at most once, any order) -> the names in the worker's
// order. The world is always measured: a list without it is an error naming --comms.
Result<std::vector<std::string>> parse_comms(std::string_view list);
// Names <-> roles, each in the worker's order; a name that is no role is left out.
std::vector<CommRole> comm_roles(const std::vector<std::string>& names);
std::vector<std::string> comm_names(const std::vector<CommRole>& roles);

// One communicator shape: `nodes` nodes of `ranks_per_node` ranks each.
struct Shape {
  CommRole role = CommRole::world;
  int nodes = 1, ranks_per_node = 1;
  auto operator<=>(const Shape&) const = default;
};
// `role`'s communicators in a job of `nodes` x `ranks_per_node` (the world's): a rail is nodes x 1,
// a node 1 x ranks_per_node.
Shape shape_in(CommRole role, int nodes, int ranks_per_node);

// How a shape is said: as a profile's section ("rail: 2 nodes x 1 rank") or, where a sentence
// names the shape in passing, brief ("rail (2 nodes x 1)").
enum class ShapeWords { section, brief };
// What a node is called: a host, or on a multi-node NVLink system (an MNNVL profile) NCCL's node,
// the NVLink domain ("world: 1 NVLink domain x 16 ranks").
enum class NodeWord { node, nvlink_domain };
std::string describe_shape(const Shape& shape, ShapeWords words = ShapeWords::section,
                           NodeWord node_word = NodeWord::node);
// "1 node", "2 NVLink domains".
std::string count_nodes(int nodes, NodeWord node_word);

// A collective (nccl-tests name) on one communicator role: what the search scores and the
// profile's per-size choices are per. Everything that maps to NCCL's collectives (NCCL_ALGO lists,
// the log's names) takes `collective`: NCCL knows no shapes.
struct ShapedOp {
  std::string collective;
  CommRole role = CommRole::world;
  bool operator==(const ShapedOp&) const = default;
  // By collective, then the world first and the other roles by name (node before rail): the order
  // lists per collective and shape have always been written in (the plugin's confirmation).
  std::strong_ordering operator<=>(const ShapedOp& other) const;
};

}  // namespace nccltune
