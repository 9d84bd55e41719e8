// The attribution's working state, shared by the files that apply its rules (fleet_attribution.cpp
// has the rules whole, in the order attribute() applies them): the usable groups, the failures,
// the fleet's noise, each stage's and path's median, and which nodes are suspects. Private to
// nccltune_fleet.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/statistics.h"
#include "fleet/fleet_survey.h"
#include "fleet/nvlink_domains.h"

namespace nccltune::fleet_rules {

inline constexpr int kNoNode = -1;

// One usable group as the rules see it.
struct Group {
  int a = kNoNode;  // the node (local), or the lower index of the pair
  int b = kNoNode;  // the pair's other node; kNoNode for a local group
  int round = 0;
  bool nvlink = false;  // a pair NCCL ran over multi-node NVLink (nvlink_domains.h)
  bool ran = false;
  double busbw = 0;  // median of the repeats, when it ran
  std::optional<double> small_us;
  std::size_t repeats = 0;
  double spread = 0;  // (max - min) / median of the repeats
  std::string failure;
  std::string reason;
  int other(int node) const { return a == node ? b : a; }
};

// The groups that measured something usable (see "Groups" in fleet_attribution.cpp).
std::vector<Group> usable_groups(const std::vector<GroupSample>& samples, std::size_t width, std::size_t nodes);

// The failure rules (top of the file); failed_nodes() and attribute() share them.
struct FailureFacts {
  std::vector<bool> failed;           // by node index
  std::vector<FailedNode> named;      // in node order
  std::vector<std::string> messages;  // one per named node, for the fail verdicts
};

FailureFacts find_failures(const std::vector<std::string>& hosts, const std::vector<Group>& local,
                           const std::vector<Group>& pairs);

// A ratio as a whole percent, and "58-61" or "58" when both ends round the same.
int percent(double ratio);
std::string percent_range(double low_ratio, double high_ratio);

// Everything attribute() works out, in node and group terms, before it writes names. It points
// into its own group lists, so it is never copied.
struct Analysis {
  const FleetInput& input;
  std::vector<std::string> hosts;
  std::vector<Group> local;
  std::vector<Group> pairs;
  FailureFacts failures;
  std::vector<const Group*> counted_local;  // ran, node not failed
  std::vector<const Group*> counted_pairs;  // ran, neither node failed
  std::vector<const Group*> node_local;     // by node: its counted local group, or null
  std::vector<std::vector<const Group*>> node_pairs;  // by node: its counted pairs
  double noise = 0;                         // a fraction
  double factor = 0;                        // slow below median x factor
  std::optional<double> local_median;
  std::optional<double> pair_median;    // the network pairs'
  std::optional<double> nvlink_median;  // the NVLink pairs'
  NvlinkDomains domains;
  std::vector<bool> suspect;          // by node index
  std::vector<bool> slow_on_network;  // by node index: slow in every network pair (2 or more)

  explicit Analysis(const FleetInput& in);
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  static std::optional<double> median_of_groups(const std::vector<const Group*>& groups) {
    if (groups.empty()) return std::nullopt;
    std::vector<double> values;
    for (const Group* group : groups) values.push_back(group->busbw);
    return median(std::move(values));
  }

  // The counted pairs of `node` on one path.
  std::vector<const Group*> pairs_on(int node, bool nvlink) const {
    std::vector<const Group*> found;
    for (const Group* pair : node_pairs[static_cast<std::size_t>(node)])
      if (pair->nvlink == nvlink) found.push_back(pair);
    return found;
  }

  // A path's reference: the median over nodes of each node's median pair on that path (an NVLink
  // pair is held against NVLink pairs, a network pair against network pairs). A slow node is in
  // every one of its pairs, so in a small fleet it holds a large share of them (half of them with
  // 4 nodes) and would pull a plain median of the pairs down to where it hides; it holds only its
  // own entry here, and a slow link only a minority of its two nodes' pairs.
  std::optional<double> median_of_node_medians(bool nvlink) const {
    std::vector<double> node_medians;
    for (int node = 0; node < static_cast<int>(node_pairs.size()); ++node)
      if (std::optional<double> median = median_of_groups(pairs_on(node, nvlink))) node_medians.push_back(*median);
    if (node_medians.empty()) return std::nullopt;
    return median(std::move(node_medians));
  }
  const std::optional<double>& median_on(bool nvlink) const {
    return nvlink ? nvlink_median : pair_median;
  }

  // Slow against the median of its stage; only a counted group is.
  bool slow_local(const Group& group) const {
    return node_local[group.a] == &group && group.busbw < *local_median * factor;
  }
  bool slow_pair(const Group& pair) const {
    const std::optional<double>& reference = median_on(pair.nvlink);
    return pair.ran && reference && pair.busbw < *reference * factor;
  }
  // The counted pairs `node` ran on the path of `except` with a partner that is no suspect, but
  // `except`: what says how the node does with others there (a suspect partner's pairs say
  // nothing of it, nor do pairs on the other path).
  std::vector<const Group*> fair_pairs_of(int node, const Group& except) const {
    std::vector<const Group*> found;
    for (const Group* pair : pairs_on(node, except.nvlink))
      if (pair != &except && !suspect[pair->other(node)]) found.push_back(pair);
    return found;
  }
  // How the evidence names a path: as it always did when no NVLink domain is known (every pair
  // crossed the network), else by path.
  struct PathWords {
    std::string pairs, median, others, over;
  };
  PathWords words(bool nvlink) const {
    if (!domains.known()) return {"pairs", "median", "others", ""};
    if (nvlink) return {"NVLink pairs", "the NVLink median", "other NVLink partners", " over NVLink"};
    return {"network pairs", "the network median", "other network partners", " across the network"};
  }
  std::string pair_name(const Group& pair) const {
    return hosts[pair.a] + " - " + hosts[pair.b];
  }
};

// Peak warnings (see "Peaks" in fleet_attribution.cpp): the local stage's, then the pairs'.
std::vector<std::string> local_peak_warnings(const Analysis& an);
std::vector<std::string> pair_peak_warnings(const Analysis& an);

}  // namespace nccltune::fleet_rules
