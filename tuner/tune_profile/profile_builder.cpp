#include "tune_profile/profile_builder.h"

#include <algorithm>

#include "profile/size_ranges.h"
#include "search/objective.h"

namespace nccltune {

StrategyResult collective_result(const StrategyResult& r, const ShapedOp& op) {
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
  if (const auto it = r.switches.find(op); it != r.switches.end()) out.switches[op] = it->second;
  return out;
}

std::vector<ShapedOp> result_collectives(const StrategyResult& r) {
  std::vector<ShapedOp> ops;
  for (const ShapedOp& op : r.ops)
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  return ops;
}

namespace {

// One collective's part of the profile: its points of the confirmation, scored on their own.
CollectiveProfile collective_profile(const StrategyResult& whole, const ShapedOp& op,
                                     const StrategyOptions& strategy, const LineRate& peak) {
  const StrategyResult r = collective_result(whole, op);
  CollectiveProfile c;
  c.guard = std::find(strategy.guards.begin(), strategy.guards.end(), op.collective) != strategy.guards.end();
  if (const auto it = r.per_size.find(op); it != r.per_size.end()) {
    const auto switches = r.switches.find(op);
    if (switches != r.switches.end()) c.switches = switches->second;
    // A range starts where its choice took over: the fitted switch between two measured sizes,
    // else the size where it first won. A switch's bracket may have been narrowed by sizes
    // measured between the two (search/crossover_refinement.h), so it is found by its `bytes`
    // falling between the previous measured size and this one, with this choice above it.
    std::vector<std::uint64_t> sizes;
    std::uint64_t previous = 0;
    for (const auto& choice : it->second) {
      const auto moved = std::find_if(c.switches.begin(), c.switches.end(), [&](const SizeSwitch& s) {
        return previous < s.bytes && s.bytes <= choice.min_bytes &&
               s.above == choice.algo + "/" + choice.proto;
      });
      sizes.push_back(moved != c.switches.end() ? moved->bytes : choice.min_bytes);
      previous = choice.min_bytes;
    }
    c.per_size = size_ranges(sizes, it->second);
    // size_ranges ends the last range at its start when the largest size's choice took over at a
    // switch; it holds up to the largest measured size.
    if (!c.per_size.empty() && !it->second.empty())
      c.per_size.back().max_bytes = std::max(c.per_size.back().max_bytes, it->second.back().max_bytes);
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

// Where `op` goes in `p`: the world's collectives, or its role's section (made on first use).
std::map<std::string, CollectiveProfile>& collectives_for(Profile& p, CommRole role,
                                                          const NcclNodeLayout& layout) {
  if (role == CommRole::world) return p.collectives;
  const auto section = std::find_if(p.shapes.begin(), p.shapes.end(),
                                    [&](const CommunicatorSection& s) { return s.role == role; });
  if (section != p.shapes.end()) return section->collectives;
  const Shape shape = nccl_shape_in(role, nccl_counts(layout));
  // Rails first, then nodes, whatever the order of the result's points.
  const auto at = role == CommRole::rail ? p.shapes.begin() : p.shapes.end();
  return p.shapes.insert(at, {shape.nodes, shape.ranks_per_node, role, {}})->collectives;
}

}  // namespace

Profile build_profile(const ClusterShape& shape, const StrategyResult& r, const StrategyOptions& strategy,
                      const RunFacts& run) {
  Profile p;
  p.shape.node_type_key = shape.node_type_key;
  // In NCCL's terms: on a multi-node NVLink system its node is the NVLink domain.
  const NcclNodeLayout nccl = shape.nccl();
  const ProfileShape counts = nccl_counts(nccl);
  p.shape.nodes = counts.nodes;
  p.shape.gpus_per_node = counts.gpus_per_node;
  p.shape.ranks = counts.ranks;
  p.shape.hosts = counts.hosts;
  p.shape.mnnvl = counts.mnnvl;
  p.shape.gpu = shape.node.gpu;
  p.shape.nvswitch = shape.node.nvswitch.value_or(false);
  p.shape.nics_per_node = shape.node.nics.value_or(0);
  p.shape.nic = shape.node.nic;
  p.shape.gpu_nic_affinity = shape.node.gpu_nic_affinity;
  p.shape.nccl_version = shape.node.nccl_version;
  p.shape.cuda_driver = shape.node.cuda_driver;
  p.env = r.env;
  p.keep_defaults = r.keep_defaults;
  for (const ShapedOp& op : result_collectives(r)) {
    const auto peak = run.peaks.find(op.collective);
    CollectiveProfile& c = collectives_for(p, op.role, nccl)[op.collective];
    c = collective_profile(r, op, strategy, peak == run.peaks.end() ? LineRate{} : peak->second);
    // The peak model knows the world's ranks on its nodes, not a split's: no number beats a wrong one.
    if (op.role != CommRole::world) {
      c.results.peak_busbw_gbps.reset();
      c.results.peak_bottleneck = "n/a: the hardware peak is modelled for the world only";
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

}  // namespace nccltune
