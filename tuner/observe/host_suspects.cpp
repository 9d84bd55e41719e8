#include "observe/host_suspects.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/printable_text.h"

namespace nccltune {

namespace {

// A communicator's verdict for suspects: judged when a row could be held against the profile or
// its peers; `worst` words its slowest row.
struct CommunicatorSpeed {
  bool judged = false, slow = false;
  double worst_ratio = 1;
  std::string worst;
};

using PeerKey = std::tuple<int, int, std::string, std::uint64_t>;  // n_ranks, nnodes, collective, min_bytes

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<CommunicatorSpeed> communicator_speeds(
    const std::vector<ObserveCommunicatorReport>& communicators, double tolerance) {
  std::map<PeerKey, std::vector<std::pair<std::size_t, double>>> peers;  // -> (communicator, median)
  for (std::size_t i = 0; i < communicators.size(); ++i)
    for (const ObserveRow& row : communicators[i].rows)
      if (row.busbw_median && *row.busbw_median > 0)
        peers[{communicators[i].n_ranks, communicators[i].nnodes, row.collective, row.min_bytes}]
            .emplace_back(i, *row.busbw_median);

  std::vector<CommunicatorSpeed> speeds(communicators.size());
  for (std::size_t i = 0; i < communicators.size(); ++i) {
    const ObserveCommunicatorReport& communicator = communicators[i];
    int judged = 0, slow = 0;
    for (const ObserveRow& row : communicator.rows) {
      std::optional<double> peer_ratio;
      if (row.busbw_median) {
        std::vector<double> others;
        for (const auto& [index, median] :
             peers[{communicator.n_ranks, communicator.nnodes, row.collective, row.min_bytes}])
          if (index != i) others.push_back(median);
        if (!others.empty()) peer_ratio = *row.busbw_median / median_of(others);
      }
      if (!row.ratio && !peer_ratio) continue;
      ++judged;
      const bool below_tuned = row.ratio && *row.ratio < 1 - tolerance;
      const bool below_peers = peer_ratio && *peer_ratio < kSuspectPeerRatio;
      if (!below_tuned && !below_peers) continue;
      ++slow;
      const double ratio = below_tuned ? *row.ratio : *peer_ratio;
      if (ratio < speeds[i].worst_ratio || speeds[i].worst.empty()) {
        speeds[i].worst_ratio = ratio;
        speeds[i].worst = fmt::format(
            "{} {} {} at {:.0f}% of {}", communicator.shape,
            printable_excerpt(communicator.name.empty() ? communicator.id : communicator.name, 60),
            row.collective, 100 * ratio, below_tuned ? "the profile's" : "the same shape's elsewhere");
      }
    }
    speeds[i].judged = judged > 0;
    speeds[i].slow = 2 * slow > judged;
  }
  return speeds;
}

}  // namespace

std::vector<ObserveSuspect> find_host_suspects(const std::vector<ObserveCommunicatorReport>& communicators,
                                               double tolerance) {
  const std::vector<CommunicatorSpeed> speeds = communicator_speeds(communicators, tolerance);
  struct HostSpeeds {
    std::vector<std::size_t> network, nvlink;  // judged communicators
  };
  std::map<std::string, HostSpeeds> hosts;
  for (std::size_t i = 0; i < communicators.size(); ++i) {
    if (!speeds[i].judged) continue;
    for (const std::string& host : communicators[i].hosts)
      (communicators[i].nnodes > 1 ? hosts[host].network : hosts[host].nvlink).push_back(i);
  }
  std::vector<ObserveSuspect> suspects;
  int on_network = 0, slow_on_network = 0;
  for (const auto& [host, seen] : hosts) {
    if (seen.network.empty()) continue;
    ++on_network;
    const bool network_slow =
        std::all_of(seen.network.begin(), seen.network.end(), [&](std::size_t i) { return speeds[i].slow; });
    slow_on_network += network_slow ? 1 : 0;
    const bool nvlink_fine =
        std::none_of(seen.nvlink.begin(), seen.nvlink.end(), [&](std::size_t i) { return speeds[i].slow; });
    if (!network_slow || seen.network.size() < 2 || seen.nvlink.empty() || !nvlink_fine) continue;
    double low = 1, high = 0;
    std::string worst;
    for (std::size_t i : seen.network) {
      if (speeds[i].worst_ratio <= low) worst = speeds[i].worst;
      low = std::min(low, speeds[i].worst_ratio);
      high = std::max(high, speeds[i].worst_ratio);
    }
    suspects.push_back(
        {host, fmt::format("{} of {} network communicators slow, at {:.0f}-{:.0f}% (worst: {}); {} NVLink "
                           "communicator{} not",
                           seen.network.size(), seen.network.size(), 100 * low, 100 * high, worst,
                           seen.nvlink.size(), seen.nvlink.size() == 1 ? "" : "s")});
  }
  // Every host of the network reads slow: the network or the profile, not a host.
  if (slow_on_network == on_network) suspects.clear();
  return suspects;
}

}  // namespace nccltune
