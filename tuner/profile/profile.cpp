// The profile's words: the names of its objectives, plugin verdicts and communicator roles, the
// collectives it may hold, node type keys, and what a profile says in one line (describe_env).
#include "profile/profile.h"

#include <algorithm>

#include "base/collective_names.h"

namespace nccltune {

std::string describe_env(const Env& env) {
  if (env.empty()) return "defaults";
  std::string out;
  for (const auto& [name, value] : env) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

bool is_collective_name(std::string_view name) { return is_known_collective(name); }

const CollectiveProfile* Profile::collective(std::string_view name) const {
  const auto it = collectives.find(std::string(name));
  return it == collectives.end() ? nullptr : &it->second;
}

bool Profile::only_all_reduce() const {
  return collectives.size() == 1 && collectives.count(kAllReduce);
}

bool is_valid_node_type_key(std::string_view key) {
  if (key.empty() || key.size() > 255 || key == "." || key == "..") return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

bool is_mnnvl_node_type_key(std::string_view key) {
  constexpr std::string_view kSegment = "mnnvl";
  for (std::size_t at = key.find(kSegment); at != std::string_view::npos; at = key.find(kSegment, at + 1)) {
    const std::size_t end = at + kSegment.size();
    if ((at == 0 || key[at - 1] == '.') && (end == key.size() || key[end] == '.')) return true;
  }
  return false;
}

Result<Objective> parse_objective(std::string_view name) {
  if (name == "balanced") return Objective::balanced;
  if (name == "bandwidth") return Objective::bandwidth;
  if (name == "latency") return Objective::latency;
  return Error{"unknown objective '" + std::string(name) + "' (balanced, bandwidth, latency)"};
}

std::string_view to_string(PluginStatus status) {
  switch (status) {
    case PluginStatus::none: return "none";
    case PluginStatus::confirmed: return "confirmed";
    case PluginStatus::not_served: return "not_served";
    case PluginStatus::slower: return "slower";
  }
  return "none";
}

std::string_view plugin_status_words(PluginStatus status) {
  return status == PluginStatus::not_served ? "not served" : to_string(status);
}

std::string describe_section(const CommunicatorSection& section, bool mnnvl) {
  return describe_shape({section.role, section.nodes, section.ranks_per_node}, ShapeWords::section,
                        mnnvl ? NodeWord::nvlink_domain : NodeWord::node);
}

NodeWord node_word(const ProfileShape& shape) {
  return shape.mnnvl ? NodeWord::nvlink_domain : NodeWord::node;
}

Shape nccl_shape_in(CommRole role, const ProfileShape& shape) {
  const int hosts = shape.host_count();
  switch (role) {
    case CommRole::world: return {role, shape.nodes, shape.gpus_per_node};
    case CommRole::node: return {role, 1, hosts > 0 ? shape.ranks / hosts : shape.gpus_per_node};
    case CommRole::rail: return {role, shape.nodes, shape.nodes > 0 ? hosts / shape.nodes : 1};
  }
  return {role, shape.nodes, shape.gpus_per_node};
}

std::string describe_profile_shape(const ProfileShape& shape) {
  const std::string gpus = std::to_string(shape.gpus_per_node) + (shape.gpus_per_node == 1 ? " GPU" : " GPUs");
  if (!shape.mnnvl) return count_nodes(shape.nodes, NodeWord::node) + " x " + gpus;
  const int hosts = shape.host_count();
  return count_nodes(shape.nodes, NodeWord::nvlink_domain) + " of " + gpus + " on " + std::to_string(hosts) +
         (hosts == 1 ? " host" : " hosts");
}

std::string_view to_string(Objective objective) {
  switch (objective) {
    case Objective::balanced: return "balanced";
    case Objective::bandwidth: return "bandwidth";
    case Objective::latency: return "latency";
  }
  return "balanced";
}

std::optional<double> percent_of_peak(const ProfileResults& results, std::size_t i) {
  if (!results.peak_busbw_gbps || *results.peak_busbw_gbps <= 0) return std::nullopt;
  const std::vector<double>& curve = results.tuned.empty() ? results.baseline : results.tuned;
  if (i >= curve.size()) return std::nullopt;
  return 100 * curve[i] / *results.peak_busbw_gbps;
}

}  // namespace nccltune
