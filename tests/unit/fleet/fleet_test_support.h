// Measured tables for the fleet tests: a fleet of nodes named gpu-a00.., the local stage and the
// pairs of the round-robin schedule, with values from a function of the nodes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fleet/fleet_survey.h"
#include "fleet/pair_schedule.h"

namespace nccltune::fleet_test {

inline std::string host(int node) {
  return (node < 10 ? "gpu-a0" : "gpu-a") + std::to_string(node);
}

// Three repeats with median `value` and relative spread `spread` ((max - min) / median).
inline std::vector<double> repeats(double value, double spread = 0) {
  return {value * (1 - spread / 2), value, value * (1 + spread / 2)};
}

inline FleetInput empty_fleet(int nodes) {
  FleetInput input;
  for (int node = 0; node < nodes; ++node) input.hosts.push_back(host(node));
  input.gpus_per_node = 4;
  input.bytes = std::uint64_t{1} << 30;
  input.small_bytes = 8;
  input.peak_intra_gbps = 450;
  input.peak_inter_gbps = 50;
  return input;
}

inline GroupSample local_sample(int node, double busbw, double spread = 0) {
  GroupSample sample;
  sample.nodes = {node};
  sample.busbw_gbps = repeats(busbw, spread);
  sample.small_us = repeats(20, spread);
  return sample;
}

inline GroupSample failed_sample(std::vector<int> nodes, int round, std::string failure, std::string reason) {
  GroupSample sample;
  sample.nodes = std::move(nodes);
  sample.round = round;
  sample.failure = std::move(failure);
  sample.reason = std::move(reason);
  return sample;
}

// Every node alone at `busbw(node)`, then `rounds` rounds of pairs at `pair(a, b)` (a < b); a
// pair's value below 0 stands for a hang. Nodes in `left_out` are left out of the pairs, as the
// fleet job leaves out a node that failed.
//
// A rack (GB200/GB300 NVL72): with `hosts_per_domain` N, nodes 0..N-1 share NVLink domain 0 and so
// on, and each group carries NCCL's account as the fleet job reads it: a pair inside a domain is
// one node over MNNVL ("nNodes 1 ... MNNVL 1"), one across domains two nodes; each node alone
// names its fabric (a UUID per domain) when `cliques` gives its domain's clique id. 0: an HGX
// fleet, no account at all.
struct FleetTable {
  int nodes = 8;
  int rounds = 7;
  double spread = 0;
  std::function<double(int)> busbw = [](int) { return 380.0; };
  std::function<double(int, int)> pair = [](int, int) { return 42.0; };
  std::vector<int> left_out;
  int hosts_per_domain = 0;
  std::function<std::uint32_t(int)> cliques;  // by domain index; empty: no fabric line

  int domain_of(int node) const {
    return node / hosts_per_domain;
  }
  void add_account(GroupSample& sample) const {
    if (hosts_per_domain <= 0) return;
    const bool one_domain = sample.nodes.size() == 1 || domain_of(sample.nodes[0]) == domain_of(sample.nodes[1]);
    sample.nccl_nodes = one_domain ? 1 : 2;
    sample.mnnvl = sample.nodes.size() == 2 && one_domain;
    if (sample.nodes.size() == 1 && cliques) {
      const int domain = domain_of(sample.nodes[0]);
      sample.fabric_uuid = "4e1f0c2a9b3d5e6f." + std::to_string(domain + 1);  // each rack its own fabric
      sample.clique_id = cliques(domain);
    }
  }

  FleetInput input() const {
    FleetInput in = empty_fleet(nodes);
    for (int node = 0; node < nodes; ++node) {
      in.local.push_back(local_sample(node, busbw(node), spread));
      add_account(in.local.back());
    }
    const std::vector<PairRound> schedule = round_robin(nodes);
    for (int r = 0; r < rounds; ++r) {
      for (const NodePair& p : without_nodes(schedule[static_cast<std::size_t>(r)], left_out)) {
        const double value = pair(p[0], p[1]);
        if (value < 0) {
          in.pairs.push_back(failed_sample({p[0], p[1]}, r + 1, "hang", "no progress for 60 s"));
          continue;
        }
        GroupSample sample;
        sample.nodes = {p[0], p[1]};
        sample.round = r + 1;
        sample.busbw_gbps = repeats(value, spread);
        sample.small_us = repeats(30, spread);
        add_account(sample);
        in.pairs.push_back(std::move(sample));
      }
    }
    in.rounds_planned = rounds;
    in.rounds_run = rounds;
    return in;
  }
};

}  // namespace nccltune::fleet_test
