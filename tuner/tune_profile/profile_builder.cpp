#include "tune_profile/profile_builder.h"

#include <algorithm>

#include "profile/size_ranges.h"
#include "search/comm_shapes.h"
#include "search/objective.h"

namespace nccltune {

StrategyResult collective_result(const StrategyResult& r, const std::string& op) {
  StrategyResult out;
  out.env = r.env;
  out.keep_defaults = r.keep_defaults;
  for (std::size_t i = 0; i < r.ops.size() && i < r.sizes.size(); ++i) {
    if (r.ops[i] != op) continue;
    out.ops.push_back(op);
    out.sizes.push_back(r.sizes[i]);
    if (i < r.baseline_busbw.size()) out.baseline_busbw.push_back(r.baseline_busbw[i]);
    if (i < r.tuned_busbw.size()) out.tuned_busbw.push_back(r.tuned_busbw[i]);
  }
  if (const auto it = r.per_size.find(op); it != r.per_size.end()) out.per_size[op] = it->second;
  return out;
}

std::vector<std::string> result_collectives(const StrategyResult& r) {
  std::vector<std::string> ops;
  for (const std::string& op : r.ops)
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  return ops;
}

namespace {

// One collective's part of the profile: its points of the confirmation, scored on their own.
CollectiveProfile collective_profile(const StrategyResult& whole, const std::string& op,
                                     const StrategyOptions& strategy, const LineRate& peak) {
  const StrategyResult r = collective_result(whole, op);
  CollectiveProfile c;
  c.guard = std::find(strategy.guards.begin(), strategy.guards.end(), op) != strategy.guards.end();
  if (const auto it = r.per_size.find(op); it != r.per_size.end()) {
    std::vector<std::uint64_t> sizes;
    for (const auto& choice : it->second) sizes.push_back(choice.min_bytes);
    c.per_size = size_ranges(sizes, it->second);
  }
  if (!r.sizes.empty()) c.measured = {r.sizes.front(), r.sizes.back()};
  c.results.sizes = r.sizes;
  c.results.baseline = r.baseline_busbw;
  c.results.tuned = r.tuned_busbw;
  const Score s = score(strategy.objective, std::vector<std::size_t>(r.sizes.begin(), r.sizes.end()),
                        r.baseline_busbw, r.tuned_busbw, strategy.tolerance);
  c.results.speedup_geomean = s.value;
  c.results.worst_size_ratio = s.worst_ratio;
  c.results.peak_busbw_gbps = peak.gbps;
  c.results.peak_bottleneck =
      peak.gbps ? peak.bottleneck.value_or("") : "unknown: " + peak.unknown_reason.value_or("");
  return c;
}

}  // namespace

Profile build_profile(const ClusterShape& shape, const StrategyResult& r, const StrategyOptions& strategy,
                      const RunFacts& run) {
  Profile p;
  p.shape.node_type_key = shape.node_type_key;
  p.shape.nodes = shape.nodes;
  p.shape.gpus_per_node = shape.node.gpus;
  p.shape.ranks = shape.nodes * shape.node.gpus;
  p.shape.gpu = shape.node.gpu;
  p.shape.nvswitch = shape.node.nvswitch.value_or(false);
  p.shape.nics_per_node = shape.node.nics.value_or(0);
  p.shape.nic = shape.node.nic;
  p.shape.gpu_nic_affinity = shape.node.gpu_nic_affinity;
  p.shape.nccl_version = shape.node.nccl_version;
  p.shape.cuda_driver = shape.node.cuda_driver;
  p.env = r.env;
  p.keep_defaults = r.keep_defaults;
  for (const std::string& op : result_collectives(r)) {
    const auto peak = run.peaks.find(op);
    p.collectives[op] =
        collective_profile(r, op, strategy, peak == run.peaks.end() ? LineRate{} : peak->second);
    // The peak model knows the world's ranks on its nodes, not a split's: no number beats a wrong one.
    if (collective_comm(op) != kWorldComm) {
      p.collectives[op].results.peak_busbw_gbps.reset();
      p.collectives[op].results.peak_bottleneck = "n/a: the hardware peak is modelled for the world only";
    }
  }
  p.provenance.tool = std::string("nccltune ") + NCCLTUNE_VERSION;
  p.provenance.date = run.date;
  p.provenance.trials = r.counts.trials;  // trial_counts.h: env trials, pairs, failed configs
  p.provenance.pairs = r.counts.pairs;
  p.provenance.failed_trials = static_cast<int>(r.failed.size());
  p.provenance.duration_s = run.duration_s;
  p.provenance.objective = std::string(to_string(strategy.objective));
  p.provenance.hosts = shape.nodes;
  p.provenance.noise_floor = r.noise;
  p.provenance.confirmation = r.confirmation;
  p.failed = r.failed;
  p.notes = r.notes;
  return p;
}

Profile sectioned_profile(Profile flat) {
  const int nodes = std::max(1, flat.shape.nodes);
  const int ranks_per_node = std::max(1, flat.shape.ranks / nodes);
  for (auto it = flat.collectives.begin(); it != flat.collectives.end();) {
    const std::string comm = collective_comm(it->first);
    if (comm == kWorldComm) {
      ++it;
      continue;
    }
    const bool rail = comm == "rail";
    CommunicatorSection wanted;
    wanted.nodes = rail ? nodes : 1;
    wanted.ranks_per_node = rail ? 1 : ranks_per_node;
    wanted.role = rail ? CommRole::rail : CommRole::node;
    auto section = std::find_if(flat.shapes.begin(), flat.shapes.end(), [&](const CommunicatorSection& s) {
      return s.role == wanted.role;
    });
    if (section == flat.shapes.end()) section = flat.shapes.insert(flat.shapes.end(), wanted);
    section->collectives[base_collective(it->first)] = std::move(it->second);
    it = flat.collectives.erase(it);
  }
  // Rails first, then nodes, whatever the map's order of the names.
  std::stable_sort(flat.shapes.begin(), flat.shapes.end(),
                   [](const CommunicatorSection& a, const CommunicatorSection& b) {
                     return (a.role == CommRole::rail) > (b.role == CommRole::rail);
                   });
  return flat;
}

}  // namespace nccltune
