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
#include "fleet/fleet_analysis.h"
#include "fleet/fleet_numbers.h"
#include "fleet/nvlink_domains.h"

namespace nccltune {
namespace {

using namespace fleet_rules;

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
