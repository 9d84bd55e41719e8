#include "search/trial.h"

#include <algorithm>
#include <cmath>

#include "base/size_steps.h"

namespace nccltune {

namespace {

constexpr TrialPhase kPhases[] = {TrialPhase::baseline, TrialPhase::screen,   TrialPhase::cross,
                                  TrialPhase::halving,  TrialPhase::per_size, TrialPhase::confirm};

}  // namespace

std::string_view to_string(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::baseline: return "baseline";
    case TrialPhase::screen: return "screen";
    case TrialPhase::cross: return "cross";
    case TrialPhase::halving: return "halving";
    case TrialPhase::per_size: return "per-size";
    case TrialPhase::confirm: return "confirm";
  }
  return "?";
}

std::optional<TrialPhase> parse_trial_phase(std::string_view name) {
  for (TrialPhase phase : kPhases)
    if (to_string(phase) == name) return phase;
  return std::nullopt;
}

TrialMeasurement without_points(const TrialMeasurement& m) {
  TrialMeasurement out = m;
  out.ops.clear();
  out.comms.clear();
  out.sizes.clear();
  out.time_us.clear();
  out.busbw.clear();
  out.nccl_choices.clear();
  out.unavailable.clear();
  out.plugin_served.clear();
  return out;
}

void copy_point(const TrialMeasurement& m, std::size_t i, TrialMeasurement& out) {
  out.ops.push_back(m.ops[i]);
  if (i < m.comms.size()) out.comms.push_back(m.comms[i]);
  if (i < m.sizes.size()) out.sizes.push_back(m.sizes[i]);
  if (i < m.time_us.size()) out.time_us.push_back(m.time_us[i]);
  if (i < m.busbw.size()) out.busbw.push_back(m.busbw[i]);
  if (i < m.nccl_choices.size()) out.nccl_choices.push_back(m.nccl_choices[i]);
  if (i < m.plugin_served.size()) out.plugin_served.push_back(m.plugin_served[i]);
}

std::uint64_t SizeGrid::aligned_min_bytes() const {
  double size = static_cast<double>(max_bytes);
  if (factor <= 1) return min_bytes;
  while (size / factor >= static_cast<double>(min_bytes)) size /= factor;
  return static_cast<std::uint64_t>(std::llround(size));
}

std::vector<std::uint64_t> grid_sizes(const SizeGrid& grid) {
  return size_steps(grid.aligned_min_bytes(), grid.max_bytes, grid.factor, 0);
}

std::vector<std::uint64_t> request_sizes(const TrialRequest& request) {
  return request.sizes.empty() ? grid_sizes(request.grid) : request.sizes;
}

TrialMeasurement points_of(const TrialMeasurement& m, const std::vector<std::string>& ops) {
  TrialMeasurement out = without_points(m);
  for (std::size_t i = 0; i < m.ops.size(); ++i)
    if (std::find(ops.begin(), ops.end(), m.ops[i]) != ops.end()) copy_point(m, i, out);
  return out;
}

ShapedOp point_op(const TrialMeasurement& m, std::size_t i) {
  const std::optional<CommRole> role = i < m.comms.size() ? parse_comm_role(m.comms[i]) : CommRole::world;
  return {i < m.ops.size() ? m.ops[i] : std::string(), role.value_or(CommRole::world)};
}

std::vector<ShapedOp> point_ops(const TrialMeasurement& m) {
  std::vector<ShapedOp> ops;
  for (std::size_t i = 0; i < m.ops.size(); ++i) ops.push_back(point_op(m, i));
  return ops;
}

TrialMeasurement pair_points(const TrialMeasurement& m, std::size_t pairs, std::size_t pair) {
  TrialMeasurement out = without_points(m);
  out.pair_outcomes.clear();
  if (m.outcome == TrialOutcome::ok && pair < m.pair_outcomes.size()) out.outcome = m.pair_outcomes[pair];
  if (pairs == 0 || m.ops.size() % pairs != 0) return out;
  const std::size_t each = m.ops.size() / pairs;
  for (std::size_t i = pair * each; i < (pair + 1) * each; ++i) {
    copy_point(m, i, out);
    out.unavailable.push_back(i < m.unavailable.size() ? m.unavailable[i] : 0);
  }
  return out;
}

int trial_count(const TrialRequest& request) {
  return request.pairs.empty() ? 1 : static_cast<int>(request.pairs.size());
}

}  // namespace nccltune
