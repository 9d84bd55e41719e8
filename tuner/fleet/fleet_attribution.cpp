// The rules, in the order attribute() applies them:
//
// Groups. A group "ran" when it has no failure; its value is the median of its repeats (busbw at
// the large size; the small size's time likewise). A group that names a node index outside
// `hosts`, the wrong number of nodes or one node twice, or that neither failed nor has repeats
// (or has a repeat that is not a finite number >= 0), measured nothing usable and is left out.
//
// Failures. A failed local group names its node (FailedNode stage "local"); that node's pairs
// are then ignored (the job leaves it out of later rounds anyway). A node whose every pair failed,
// two or more, names that node (stage "pairs"), not its partners, which ran fine with others.
// failed_nodes() is exactly this set. The failed nodes' groups and the failed pairs count in no
// median and in the noise.
//
// Noise. For each counted group that ran with two or more repeats, the relative spread of its
// repeats, (max - min) / median. The fleet's noise is the 90th percentile (nearest rank) of those
// spreads: it covers the spread nearly every group showed, while one erratic group (a node that
// hiccupped once) does not make the whole survey blind, as the maximum would. With under ten
// groups it is the maximum.
//
// Slow. A value is slow when it is below median x min(outlier, 1 - 3 x noise): the operator's
// threshold, unless the fleet's own spread between repeats is so wide that a shortfall that size
// could be chance; then only a shortfall of three times the noise counts.
//
// Paths. A pair NCCL counted as one node over multi-node NVLink is an NVLink pair (its nodes
// share an NVLink domain: nvlink_domains.h); every other pair is a network pair. Each path is
// held against its own median and no pair against the other path's: NVLink inside a rack is many
// times the network between racks. With no NVLink pair (HGX) every pair is a network pair and
// nothing below names a domain.
//
// Local stage: a node slow against the median of the nodes alone is a suspect, path "local".
// Pairs stage: a path's median is the median over nodes of each node's median pair on that path
// (a slow node, in every one of its pairs, cannot drag it down in a small fleet). A node with two
// or more network pairs that ran, every one slow, is a suspect, path "network" (its NIC); one
// with two or more NVLink pairs, every one slow, path "nvlink" (its NVLink), so a tray slow only
// inside its domain is told from one slow only across the network. Slow on both: named by the
// worse, the other in the evidence; slow alone as well: named once, "local", its pairs in the
// evidence. A domain of two or more nodes whose every node is slow on the network is named as a
// whole as well (a verdict). A slow pair that a suspect explains is nobody else's; one whose two
// nodes each ran another pair on its path is a link; one where a node ran no other pair there is
// a warning (one pair cannot tell the node from the link: more rounds are needed, or on NVLink a
// domain of 3 or more nodes). A failed pair that no failed node explains is a link ("failed only
// together") when both nodes ran other pairs on its path, else likewise a warning.
//
// Peaks. pct_of_peak = busbw / the peak model's busbw (intra-node alone, inter-node in network
// pairs; NVLink pairs are held against no peak). Below min_peak_pct is a warning, per node; when
// every node (two or more) is below, one warning for the fleet instead (the fleet, or the peak
// model, is off, not a node). Network pairs below give one warning listing them, or one for the
// fleet when every one is.
//
// Numbers in the survey are rounded as the JSON writes them (0.1 GB/s, 0.1 %, 0.01 us), so that
// the JSON read back is the same survey; the rules above use the unrounded values.
#include "fleet/fleet_attribution.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "base/clean_text.h"
#include "base/statistics.h"
#include "fleet/fleet_numbers.h"
#include "fleet/nvlink_domains.h"

namespace nccltune {
namespace {

constexpr int kNoNode = -1;

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

std::vector<Group> usable_groups(const std::vector<GroupSample>& samples, std::size_t width, std::size_t nodes) {
  std::vector<Group> groups;
  for (const GroupSample& sample : samples)
    if (std::optional<Group> group = usable_group(sample, width, nodes)) groups.push_back(std::move(*group));
  return groups;
}

// The failure rules (top of the file); failed_nodes() and attribute() share them.
struct FailureFacts {
  std::vector<bool> failed;           // by node index
  std::vector<FailedNode> named;      // in node order
  std::vector<std::string> messages;  // one per named node, for the fail verdicts
};

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

int percent(double ratio) {
  return static_cast<int>(std::lround(ratio * 100));
}

// "58-61" or "58" when both ends round the same.
std::string percent_range(double low_ratio, double high_ratio) {
  const int low = percent(low_ratio), high = percent(high_ratio);
  return low == high ? std::to_string(low) : fmt::format("{}-{}", low, high);
}

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

  explicit Analysis(const FleetInput& in)
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

std::optional<double> pct_of(double busbw, const std::optional<double>& peak) {
  if (!peak || !(*peak > 0)) return std::nullopt;
  return busbw / *peak * 100;
}

std::vector<LocalResult> local_results(const Analysis& an) {
  std::vector<const Group*> order;
  for (const Group& group : an.local) order.push_back(&group);
  std::stable_sort(order.begin(), order.end(), [](const Group* x, const Group* y) { return x->a < y->a; });
  std::vector<LocalResult> results;
  const FleetThresholds& limits = an.input.thresholds;
  for (const Group* group : order) {
    LocalResult result;
    result.node = an.hosts[group->a];
    result.domain = an.domains.name_of(group->a);
    if (!group->ran) {
      result.verdict = "failed";
      results.push_back(std::move(result));
      continue;
    }
    result.busbw_gbps = round_tenth(group->busbw);
    if (group->small_us) result.small_us = round_us(*group->small_us);
    const std::optional<double> pct = pct_of(group->busbw, an.input.peak_intra_gbps);
    if (pct) result.pct_of_peak = round_tenth(*pct);
    if (an.slow_local(*group))
      result.verdict = "slow";
    else if (pct && *pct < limits.min_peak_pct)
      result.verdict = "warn";
    else
      result.verdict = "pass";
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<PairResult> pair_results(const Analysis& an) {
  std::vector<const Group*> order;
  for (const Group& pair : an.pairs) order.push_back(&pair);
  std::stable_sort(order.begin(), order.end(), [](const Group* x, const Group* y) {
    return std::tie(x->round, x->a, x->b) < std::tie(y->round, y->a, y->b);
  });
  std::vector<PairResult> results;
  for (const Group* pair : order) {
    PairResult result;
    result.nodes = {an.hosts[pair->a], an.hosts[pair->b]};
    result.round = pair->round;
    result.path = pair->nvlink ? "nvlink" : "network";
    if (pair->ran) result.busbw_gbps = round_tenth(pair->busbw);
    result.verdict = !pair->ran ? "failed" : an.slow_pair(*pair) ? "slow" : "pass";
    results.push_back(std::move(result));
  }
  return results;
}

// A node slow in every one of its two or more pairs on one path, and how it reads.
struct PathSlowness {
  bool slow = false;
  bool nvlink = false;
  std::string evidence;  // "3 of 3 NVLink pairs in domain 1 at 55-60% of the NVLink median"
  double busbw = 0;      // the node's median pair on the path
  double median = 0;     // the path's median
  double ratio() const { return median > 0 ? busbw / median : 0; }
};

PathSlowness slowness_on(const Analysis& an, int node, bool nvlink) {
  const std::vector<const Group*> pairs = an.pairs_on(node, nvlink);
  PathSlowness found;
  found.nvlink = nvlink;
  if (pairs.size() < 2 || !std::all_of(pairs.begin(), pairs.end(), [&](const Group* p) { return an.slow_pair(*p); }))
    return found;
  found.slow = true;
  found.median = *an.median_on(nvlink);
  const auto [low, high] = std::minmax_element(pairs.begin(), pairs.end(),
                                               [](const Group* x, const Group* y) { return x->busbw < y->busbw; });
  const Analysis::PathWords words = an.words(nvlink);
  found.evidence = fmt::format("{} of {} {}{} at {}% of {}", pairs.size(), pairs.size(), words.pairs,
                               nvlink ? " in " + an.domains.name_of(node) : "",
                               percent_range((*low)->busbw / found.median, (*high)->busbw / found.median),
                               words.median);
  std::vector<double> values;
  for (const Group* pair : pairs) values.push_back(pair->busbw);
  found.busbw = median(std::move(values));
  return found;
}

// Suspect nodes with the ratio they are sorted by; marks an.suspect and an.slow_on_network. A node
// slow on both paths is named by the worse one, the other in its evidence.
std::vector<SuspectNode> find_suspects(Analysis& an) {
  std::vector<std::pair<double, SuspectNode>> found;
  for (int node = 0; node < static_cast<int>(an.hosts.size()); ++node) {
    if (an.failures.failed[node]) continue;
    PathSlowness worse = slowness_on(an, node, false), other = slowness_on(an, node, true);
    an.slow_on_network[node] = worse.slow;
    if (!worse.slow || (other.slow && other.ratio() < worse.ratio())) std::swap(worse, other);
    std::string paths_evidence = worse.evidence;
    if (other.slow) paths_evidence += "; also " + other.evidence;
    const Group* alone = an.node_local[node] && an.slow_local(*an.node_local[node]) ? an.node_local[node] : nullptr;
    SuspectNode suspect;
    suspect.node = an.hosts[node];
    suspect.domain = an.domains.name_of(node);
    if (alone) {
      suspect.path = "local";
      suspect.busbw_gbps = alone->busbw;
      suspect.median_gbps = *an.local_median;
      suspect.evidence = fmt::format("alone at {}% of median (busbw {:.1f} vs {:.1f} GB/s)",
                                     percent(alone->busbw / *an.local_median), alone->busbw, *an.local_median);
      if (worse.slow) suspect.evidence += "; also " + paths_evidence;
    } else if (worse.slow) {
      suspect.path = worse.nvlink ? "nvlink" : "network";
      suspect.busbw_gbps = worse.busbw;
      suspect.median_gbps = worse.median;
      suspect.evidence = paths_evidence;
    } else {
      continue;
    }
    suspect.evidence = cleaned_text(suspect.evidence);
    an.suspect[node] = true;
    const double ratio = suspect.median_gbps > 0 ? suspect.busbw_gbps / suspect.median_gbps : 0;
    suspect.busbw_gbps = round_tenth(suspect.busbw_gbps);
    suspect.median_gbps = round_tenth(suspect.median_gbps);
    found.emplace_back(ratio, std::move(suspect));
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<SuspectNode> suspects;
  for (auto& entry : found) suspects.push_back(std::move(entry.second));
  return suspects;
}

// A domain of two or more nodes, every one slow with every partner across the network: what they
// share (the domain's uplinks, its leaf switch) rather than each tray's NIC. One line per domain.
std::vector<std::string> slow_domains(const Analysis& an) {
  std::vector<std::string> messages;
  for (std::size_t d = 0; d < an.domains.names.size(); ++d) {
    std::vector<std::string> members;
    bool all_slow = true;
    for (std::size_t node = 0; node < an.hosts.size(); ++node) {
      if (an.domains.of_node[node] != static_cast<int>(d)) continue;
      members.push_back(an.hosts[node]);
      all_slow = all_slow && an.slow_on_network[node];
    }
    if (members.size() >= 2 && all_slow)
      messages.push_back(fmt::format("{} slow on the network as a whole: all {} of its nodes ({}) slow with every "
                                     "partner outside it (its uplinks or switch rather than one node's NIC)",
                                     an.domains.names[d], members.size(), fmt::join(members, ", ")));
  }
  return messages;
}

// "both at 97-103% with others": the two nodes' other fair pairs on the pair's path against its
// median.
std::string with_others(const Analysis& an, const Group& pair) {
  std::vector<double> ratios;
  const double reference = *an.median_on(pair.nvlink);
  for (int node : {pair.a, pair.b})
    for (const Group* other : an.fair_pairs_of(node, pair)) ratios.push_back(other->busbw / reference);
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  return fmt::format("both at {}% with {}", percent_range(*low, *high), an.words(pair.nvlink).others);
}

// The node of `pair` that ran no other fair pair, if one did not.
std::optional<int> lone_node(const Analysis& an, const Group& pair) {
  for (int node : {pair.a, pair.b})
    if (an.fair_pairs_of(node, pair).empty()) return node;
  return std::nullopt;
}

struct LinkFindings {
  std::vector<SuspectLink> links;  // worst first
  std::vector<std::string> warnings;
};

LinkFindings find_links(const Analysis& an) {
  LinkFindings out;
  std::vector<std::pair<double, SuspectLink>> found;
  const auto more_rounds = [&](const Group& pair, int lone, const std::string& what) {
    if (pair.nvlink)  // in a domain of two nodes, no round can tell
      out.warnings.push_back(fmt::format("{} {}, but {} ran no other NVLink pair: more rounds (or a domain of 3 "
                                         "or more nodes) are needed to tell the node from the link",
                                         an.pair_name(pair), what, an.hosts[lone]));
    else
      out.warnings.push_back(fmt::format("{} {}, but {} ran no other {}: more rounds are needed to tell the node "
                                         "from the link",
                                         an.pair_name(pair), what, an.hosts[lone],
                                         an.domains.known() ? "network pair" : "pair"));
  };
  for (const Group& pair : an.pairs) {
    if (an.failures.failed[pair.a] || an.failures.failed[pair.b]) continue;
    if (pair.ran) {
      if (!an.slow_pair(pair) || an.suspect[pair.a] || an.suspect[pair.b]) continue;
      const double ratio = pair.busbw / *an.median_on(pair.nvlink);
      const Analysis::PathWords words = an.words(pair.nvlink);
      if (const std::optional<int> lone = lone_node(an, pair)) {
        more_rounds(pair, *lone, fmt::format("slow together ({}% of {})", percent(ratio), words.median));
        continue;
      }
      found.emplace_back(ratio, SuspectLink{{an.hosts[pair.a], an.hosts[pair.b]},
                                            round_tenth(pair.busbw),
                                            fmt::format("slow only together{}: {}% of {}; {}", words.over,
                                                        percent(ratio), words.median, with_others(an, pair))});
    } else {
      if (const std::optional<int> lone = lone_node(an, pair)) {
        more_rounds(pair, *lone, fmt::format("failed together ({})", pair.failure));
        continue;
      }
      found.emplace_back(-1, SuspectLink{{an.hosts[pair.a], an.hosts[pair.b]},
                                         0,
                                         fmt::format("failed only together{} ({}); {}", an.words(pair.nvlink).over,
                                                     pair.failure, with_others(an, pair))});
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& entry : found) {
    entry.second.evidence = cleaned_text(entry.second.evidence);
    out.links.push_back(std::move(entry.second));
  }
  return out;
}

// Peak warnings of the local stage (see the top of the file).
std::vector<std::string> local_peak_warnings(const Analysis& an) {
  const std::optional<double>& peak = an.input.peak_intra_gbps;
  if (!peak || !(*peak > 0) || an.counted_local.empty()) return {};
  const double limit = an.input.thresholds.min_peak_pct;
  std::vector<const Group*> below;
  for (const Group* group : an.counted_local)
    if (group->busbw / *peak * 100 < limit) below.push_back(group);
  if (below.size() >= 2 && below.size() == an.counted_local.size()) {
    const auto [low, high] = std::minmax_element(below.begin(), below.end(),
                                                 [](const Group* x, const Group* y) { return x->busbw < y->busbw; });
    return {fmt::format("all {} nodes at {}% of the peak model ({:.1f} GB/s in a node), below {}%: the fleet (or "
                        "the model), not a node",
                        below.size(), percent_range((*low)->busbw / *peak, (*high)->busbw / *peak), *peak,
                        limit)};
  }
  std::vector<std::string> warnings;
  for (const Group* group : below)
    if (!an.suspect[group->a])
      warnings.push_back(fmt::format("{} alone at {}% of the peak model ({:.1f} of {:.1f} GB/s), below {}%",
                                     an.hosts[group->a], percent(group->busbw / *peak), group->busbw, *peak,
                                     limit));
  return warnings;
}

// Peak warnings of the pairs stage: one for the fleet, or one listing the pairs below (the slow
// ones are named otherwise).
std::vector<std::string> pair_peak_warnings(const Analysis& an) {
  const std::optional<double>& peak = an.input.peak_inter_gbps;
  if (!peak || !(*peak > 0) || an.counted_pairs.empty()) return {};
  const double limit = an.input.thresholds.min_peak_pct;
  // The model between two nodes is the network's: NVLink pairs are not held against it.
  std::vector<const Group*> network;
  for (const Group* pair : an.counted_pairs)
    if (!pair->nvlink) network.push_back(pair);
  if (network.empty()) return {};
  std::vector<const Group*> below;
  for (const Group* pair : network)
    if (pair->busbw / *peak * 100 < limit) below.push_back(pair);
  const auto by_busbw = [](const Group* x, const Group* y) { return x->busbw < y->busbw; };
  std::stable_sort(below.begin(), below.end(), by_busbw);
  const std::string pairs_word = an.domains.known() ? "network pairs" : "pairs";
  if (below.size() >= 2 && below.size() == network.size())
    return {fmt::format("all {} {} at {}% of the inter-node peak model ({:.1f} GB/s), below {}%: the network "
                        "(or the model), not a node",
                        below.size(), pairs_word,
                        percent_range(below.front()->busbw / *peak, below.back()->busbw / *peak),
                        *peak, limit)};
  below.erase(std::remove_if(below.begin(), below.end(), [&](const Group* p) { return an.slow_pair(*p); }),
              below.end());
  if (below.empty()) return {};
  constexpr std::size_t kListed = 5;
  std::string listed;
  for (std::size_t i = 0; i < below.size() && i < kListed; ++i)
    listed += fmt::format("{}{} {}%", i ? ", " : "", an.pair_name(*below[i]), percent(below[i]->busbw / *peak));
  if (below.size() > kListed) listed += ", ...";
  return {fmt::format("{} of {} {} below {}% of the inter-node peak model ({:.1f} GB/s): {}", below.size(),
                      network.size(), pairs_word, limit, *peak, listed)};
}

FleetVerdict verdict(const char* level, std::string message) {
  FleetVerdict v;
  v.level = level;
  v.message = cleaned_text(message);  // within the free-text limit however long the names are
  return v;
}

}  // namespace

std::vector<int> failed_nodes(const FleetInput& input) {
  const std::size_t n = input.hosts.size();
  const FailureFacts facts =
      find_failures(input.hosts, usable_groups(input.local, 1, n), usable_groups(input.pairs, 2, n));
  std::vector<int> nodes;
  for (std::size_t node = 0; node < n; ++node)
    if (facts.failed[node]) nodes.push_back(static_cast<int>(node));
  return nodes;
}

FleetSurvey attribute(const FleetInput& input) {
  Analysis an(input);
  FleetSurvey survey;
  survey.nodes = static_cast<int>(input.hosts.size());
  survey.gpus_per_node = input.gpus_per_node;
  survey.collective = cleaned_text(input.collective);
  survey.bytes = input.bytes;
  survey.small_bytes = input.small_bytes;
  if (input.peak_intra_gbps) survey.peak_intra_gbps = round_tenth(*input.peak_intra_gbps);
  if (input.peak_inter_gbps) survey.peak_inter_gbps = round_tenth(*input.peak_inter_gbps);
  survey.thresholds = input.thresholds;
  survey.noise_pct = round_tenth(an.noise * 100);
  if (an.local_median) survey.local_median_gbps = round_tenth(*an.local_median);
  if (an.pair_median) survey.pair_median_gbps = round_tenth(*an.pair_median);
  if (an.nvlink_median) survey.nvlink_median_gbps = round_tenth(*an.nvlink_median);
  survey.rounds = input.rounds_run;
  survey.local = local_results(an);
  survey.pairs = pair_results(an);
  survey.suspects = find_suspects(an);
  LinkFindings links = find_links(an);
  survey.links = std::move(links.links);
  survey.failed = an.failures.named;

  for (const std::string& message : an.failures.messages) survey.verdicts.push_back(verdict("fail", message));
  for (const SuspectNode& s : survey.suspects) {
    const std::string who = s.domain.empty() ? s.node : s.node + " (" + s.domain + ")";
    const char* partners = s.path == "nvlink"         ? " in its NVLink domain"
                           : an.domains.known() ? " across the network"
                                                : "";
    survey.verdicts.push_back(verdict("fail", s.path == "local" ? fmt::format("{} slow alone: {}", who, s.evidence)
                                                                : fmt::format("{} slow with every partner{}: {} (busbw "
                                                                              "{:.1f} vs {:.1f} GB/s)",
                                                                              who, partners, s.evidence, s.busbw_gbps,
                                                                              s.median_gbps)));
  }
  for (std::string& message : slow_domains(an)) survey.verdicts.push_back(verdict("fail", std::move(message)));
  for (const SuspectLink& link : survey.links)
    survey.verdicts.push_back(verdict("fail", fmt::format("link {} - {}: {}", link.nodes[0], link.nodes[1], link.evidence)));
  std::vector<std::string> warnings = local_peak_warnings(an);
  for (std::string& w : pair_peak_warnings(an)) warnings.push_back(std::move(w));
  for (std::string& w : links.warnings) warnings.push_back(std::move(w));
  if (!input.stopped.empty())
    warnings.push_back(fmt::format("stopped after {} of {} round{}: {}", input.rounds_run,
                                   input.rounds_planned, input.rounds_planned == 1 ? "" : "s",
                                   cleaned_text(input.stopped)));
  for (std::string& w : warnings) survey.verdicts.push_back(verdict("warn", std::move(w)));
  if (survey.verdicts.empty())
    survey.verdicts.push_back(verdict("pass", fmt::format("{} nodes, {} pairs: none slower than {}% of median "
                                                          "(noise {:.1f}%)",
                                                          survey.nodes, an.counted_pairs.size(),
                                                          percent(an.factor), survey.noise_pct)));
  return survey;
}

int fleet_exit_code(const FleetSurvey& survey) {
  const auto has_level = [&](std::string_view level) {
    return std::any_of(survey.verdicts.begin(), survey.verdicts.end(),
                       [&](const FleetVerdict& v) { return v.level == level; });
  };
  if (!survey.suspects.empty() || !survey.links.empty() || !survey.failed.empty() || has_level("fail")) return 2;
  return has_level("warn") ? 1 : 0;
}

}  // namespace nccltune
