// The peak warnings of the fleet survey (see "Peaks" at the top of fleet_attribution.cpp).
#include "fleet/fleet_analysis.h"

#include <fmt/format.h>

#include <algorithm>

namespace nccltune::fleet_rules {

// Peak warnings of the local stage.
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

}  // namespace nccltune::fleet_rules
