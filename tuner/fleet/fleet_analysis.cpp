// The attribution's groups, failures, noise and medians (fleet_analysis.h).
#include "fleet/fleet_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/clean_text.h"
#include "base/statistics.h"

namespace nccltune::fleet_rules {
namespace {

bool finite_non_negative(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v) && v >= 0; });
}

std::optional<Group> usable_group(const GroupSample& sample, std::size_t width, std::size_t nodes) {
  if (sample.nodes.size() != width) return std::nullopt;
  for (int node : sample.nodes)
    if (node < 0 || static_cast<std::size_t>(node) >= nodes) return std::nullopt;
  if (width == 2 && sample.nodes[0] == sample.nodes[1]) return std::nullopt;
  Group group;
  group.a = width == 2 ? std::min(sample.nodes[0], sample.nodes[1]) : sample.nodes[0];
  group.b = width == 2 ? std::max(sample.nodes[0], sample.nodes[1]) : kNoNode;
  group.round = sample.round;
  group.nvlink = is_nvlink_pair(sample);
  group.failure = cleaned_text(sample.failure);
  group.reason = cleaned_text(sample.reason);
  if (!sample.failure.empty()) return group;
  if (sample.busbw_gbps.empty() || !finite_non_negative(sample.busbw_gbps) || !finite_non_negative(sample.small_us))
    return std::nullopt;
  group.ran = true;
  group.repeats = sample.busbw_gbps.size();
  group.busbw = median(sample.busbw_gbps);
  const auto [low, high] = std::minmax_element(sample.busbw_gbps.begin(), sample.busbw_gbps.end());
  group.spread = group.busbw > 0 ? (*high - *low) / group.busbw : 0;
  if (!sample.small_us.empty()) group.small_us = median(sample.small_us);
  return group;
}

}  // namespace

std::vector<Group> usable_groups(const std::vector<GroupSample>& samples, std::size_t width, std::size_t nodes) {
  std::vector<Group> groups;
  for (const GroupSample& sample : samples)
    if (std::optional<Group> group = usable_group(sample, width, nodes)) groups.push_back(std::move(*group));
  return groups;
}

FailureFacts find_failures(const std::vector<std::string>& hosts, const std::vector<Group>& local,
                           const std::vector<Group>& pairs) {
  const std::size_t n = hosts.size();
  FailureFacts facts;
  facts.failed.assign(n, false);
  std::vector<const Group*> local_failure(n, nullptr);  // by node: its first failed local group
  for (const Group& group : local)
    if (!group.ran && !local_failure[group.a]) local_failure[group.a] = &group;

  std::vector<int> counted(n, 0), failed_pairs(n, 0);
  std::vector<const Group*> first_pair_failure(n, nullptr);
  for (const Group& pair : pairs) {
    if (local_failure[pair.a] || local_failure[pair.b]) continue;  // the pair is the failed node's
    for (int node : {pair.a, pair.b}) {
      ++counted[node];
      if (pair.ran) continue;
      ++failed_pairs[node];
      if (!first_pair_failure[node]) first_pair_failure[node] = &pair;
    }
  }

  for (std::size_t node = 0; node < n; ++node) {
    const std::string& host = hosts[node];
    if (const Group* group = local_failure[node]) {
      facts.named.push_back({host, group->failure, "local", group->reason});
      facts.messages.push_back(fmt::format("{} failed alone ({}){}", host, group->failure,
                                           group->reason.empty() ? "" : ": " + group->reason));
    } else if (counted[node] >= 2 && failed_pairs[node] == counted[node]) {
      const Group& first = *first_pair_failure[node];
      facts.named.push_back({host, first.failure, "pairs", first.reason});
      facts.messages.push_back(fmt::format("{} failed in every pair ({} of {}, {}){}", host, failed_pairs[node],
                                           counted[node], first.failure,
                                           first.reason.empty() ? "" : ": " + first.reason));
    } else {
      continue;
    }
    facts.failed[node] = true;
  }
  return facts;
}

namespace {

std::vector<std::string> clean_hosts(const std::vector<std::string>& hosts) {
  std::vector<std::string> cleaned;
  for (const std::string& host : hosts) cleaned.push_back(cleaned_text(host));
  return cleaned;
}

// 90th percentile, nearest rank, of the spreads of the groups that repeated; 0 when none did.
double fleet_noise(const std::vector<const Group*>& counted) {
  std::vector<double> spreads;
  for (const Group* group : counted)
    if (group->repeats >= 2) spreads.push_back(group->spread);
  if (spreads.empty()) return 0;
  std::sort(spreads.begin(), spreads.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(spreads.size())));
  return spreads[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace

int percent(double ratio) {
  return static_cast<int>(std::lround(ratio * 100));
}

std::string percent_range(double low_ratio, double high_ratio) {
  const int low = percent(low_ratio), high = percent(high_ratio);
  return low == high ? std::to_string(low) : fmt::format("{}-{}", low, high);
}

Analysis::Analysis(const FleetInput& in)
    : input(in),
      hosts(clean_hosts(in.hosts)),
      local(usable_groups(in.local, 1, in.hosts.size())),
      pairs(usable_groups(in.pairs, 2, in.hosts.size())),
      failures(find_failures(hosts, local, pairs)),
      node_local(in.hosts.size(), nullptr),
      node_pairs(in.hosts.size()),
      domains(nvlink_domains(in.hosts.size(), in.local, in.pairs)),
      suspect(in.hosts.size(), false),
      slow_on_network(in.hosts.size(), false) {
  for (const Group& group : local) {
    if (!group.ran || failures.failed[group.a]) continue;
    counted_local.push_back(&group);
    if (!node_local[group.a]) node_local[group.a] = &group;
  }
  for (const Group& pair : pairs) {
    if (!pair.ran || failures.failed[pair.a] || failures.failed[pair.b]) continue;
    counted_pairs.push_back(&pair);
    node_pairs[pair.a].push_back(&pair);
    node_pairs[pair.b].push_back(&pair);
  }
  std::vector<const Group*> counted = counted_local;
  counted.insert(counted.end(), counted_pairs.begin(), counted_pairs.end());
  noise = fleet_noise(counted);
  factor = std::max(0.0, std::min(in.thresholds.outlier, 1 - 3 * noise));
  local_median = median_of_groups(counted_local);
  pair_median = median_of_node_medians(false);
  nvlink_median = median_of_node_medians(true);
}

}  // namespace nccltune::fleet_rules
