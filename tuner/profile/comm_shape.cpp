#include "profile/comm_shape.h"

#include <algorithm>
#include <utility>

namespace nccltune {

std::string_view to_string(CommRole role) {
  switch (role) {
    case CommRole::world: return "world";
    case CommRole::rail: return "rail";
    case CommRole::node: return "node";
  }
  return "world";
}

std::optional<CommRole> parse_comm_role(std::string_view name) {
  for (const CommRole role : kCommRoles)
    if (name == to_string(role)) return role;
  return std::nullopt;
}

Result<std::vector<std::string>> parse_comms(std::string_view list) {
  std::vector<CommRole> named;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    const std::optional<CommRole> role = parse_comm_role(name);
    if (!role)
      return Error{"--comms: '" + std::string(name) + "' is not a communicator shape (world, rail, node)"};
    if (std::find(named.begin(), named.end(), *role) != named.end())
      return Error{"--comms: " + std::string(name) + " is named twice"};
    named.push_back(*role);
    start = comma + 1;
  }
  if (std::find(named.begin(), named.end(), CommRole::world) == named.end())
    return Error{"--comms: the world is always measured: add world"};
  return comm_names(named);
}

std::vector<CommRole> comm_roles(const std::vector<std::string>& names) {
  std::vector<CommRole> roles;
  for (const CommRole role : kCommRoles)
    if (std::find(names.begin(), names.end(), to_string(role)) != names.end()) roles.push_back(role);
  return roles;
}

std::vector<std::string> comm_names(const std::vector<CommRole>& roles) {
  std::vector<std::string> names;
  for (const CommRole role : kCommRoles)
    if (std::find(roles.begin(), roles.end(), role) != roles.end()) names.emplace_back(to_string(role));
  return names;
}

Shape shape_in(CommRole role, int nodes, int ranks_per_node) {
  return {role, role == CommRole::node ? 1 : nodes, role == CommRole::rail ? 1 : ranks_per_node};
}

std::string count_nodes(int nodes, NodeWord node_word) {
  const char* word = node_word == NodeWord::nvlink_domain ? " NVLink domain" : " node";
  return std::to_string(nodes) + word + (nodes == 1 ? "" : "s");
}

std::string describe_shape(const Shape& shape, ShapeWords words, NodeWord node_word) {
  const std::string nodes = count_nodes(shape.nodes, node_word);
  const std::string ranks = std::to_string(shape.ranks_per_node);
  const std::string role(to_string(shape.role));
  if (words == ShapeWords::brief) return role + " (" + nodes + " x " + ranks + ")";
  return role + ": " + nodes + " x " + ranks + (shape.ranks_per_node == 1 ? " rank" : " ranks");
}

std::strong_ordering ShapedOp::operator<=>(const ShapedOp& other) const {
  const auto rank = [](CommRole r) { return std::pair{r != CommRole::world, to_string(r)}; };
  if (const auto by_collective = collective <=> other.collective; by_collective != 0) return by_collective;
  return rank(role) <=> rank(other.role);
}

}  // namespace nccltune
