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
struct FleetTable {
  int nodes = 8;
  int rounds = 7;
  double spread = 0;
  std::function<double(int)> busbw = [](int) { return 380.0; };
  std::function<double(int, int)> pair = [](int, int) { return 42.0; };
  std::vector<int> left_out;

  FleetInput input() const {
    FleetInput in = empty_fleet(nodes);
    for (int node = 0; node < nodes; ++node) in.local.push_back(local_sample(node, busbw(node), spread));
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
        in.pairs.push_back(std::move(sample));
      }
    }
    in.rounds_planned = rounds;
    in.rounds_run = rounds;
    return in;
  }
};

}  // namespace nccltune::fleet_test
