#include "tune_profile/withheld_settings.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <utility>

#include "base/byte_size.h"
#include "base/statistics.h"

namespace nccltune {

namespace {

using PointKey = std::pair<ShapedOp, std::uint64_t>;  // collective on its communicator, bytes

std::map<PointKey, double> mean_points(const std::vector<TrialMeasurement>& runs) {
  std::map<PointKey, std::pair<double, int>> sums;
  for (const TrialMeasurement& m : runs) {
    if (m.outcome != TrialOutcome::ok) continue;
    for (std::size_t i = 0; i < m.ops.size() && i < m.sizes.size() && i < m.busbw.size(); ++i) {
      if (!std::isfinite(m.busbw[i])) continue;
      auto& [sum, count] = sums[{point_op(m, i), m.sizes[i]}];
      sum += m.busbw[i];
      ++count;
    }
  }
  std::map<PointKey, double> means;
  for (const auto& [key, sum] : sums) means[key] = sum.first / sum.second;
  return means;
}

bool ships(const Env& env, const Env& shipped) {
  for (const auto& [name, value] : env) {
    const auto it = shipped.find(name);
    if (it == shipped.end() || it->second != value) return false;
  }
  return true;
}

struct Verdict {
  double best_gain = 1;  // the best shape's geometric mean
  std::string best_comm;
  double worst = 1;  // the worst point's ratio
  PointKey worst_at;
};

Verdict judge(const TrialMeasurement& m, const std::map<PointKey, double>& defaults) {
  std::map<std::string, std::vector<double>> ratios;  // per shape
  Verdict v;
  for (std::size_t i = 0; i < m.ops.size() && i < m.sizes.size() && i < m.busbw.size(); ++i) {
    const ShapedOp op = point_op(m, i);
    const auto base = defaults.find({op, m.sizes[i]});
    if (base == defaults.end() || !(base->second > 0) || !(m.busbw[i] > 0)) continue;
    const double ratio = m.busbw[i] / base->second;
    ratios[std::string(to_string(op.role))].push_back(ratio);
    if (ratio < v.worst) {
      v.worst = ratio;
      v.worst_at = base->first;
    }
  }
  for (const auto& [comm, shape_ratios] : ratios) {
    const double gain = geometric_mean(shape_ratios);
    if (gain > v.best_gain) {
      v.best_gain = gain;
      v.best_comm = comm;
    }
  }
  return v;
}

}  // namespace

std::vector<WithheldSetting> withheld_settings(const std::vector<TrialMeasurement>& baselines,
                                               const std::vector<ScreenedEnv>& screened, const Env& shipped,
                                               const NcclNodeLayout& layout, double noise, double tolerance) {
  const std::map<PointKey, double> defaults = mean_points(baselines);
  std::map<std::string, std::pair<double, WithheldSetting>> by_variable;  // the best gain per variable
  for (const ScreenedEnv& s : screened) {
    if (s.env.empty() || s.measured.outcome != TrialOutcome::ok || ships(s.env, shipped)) continue;
    const Verdict v = judge(s.measured, defaults);
    if (v.best_gain <= 1 + noise || v.worst >= 1 - tolerance) continue;
    const auto& [op, bytes] = v.worst_at;
    const Shape lost_on = nccl_shape_in(op.role, nccl_counts(layout));
    WithheldSetting w{s.env, fmt::format("{}: {} {:+.0f}% at {}; {:+.0f}% on {}",
                                         describe_shape(lost_on, ShapeWords::brief), op.collective,
                                         100 * (v.worst - 1), format_byte_size(bytes),
                                         100 * (v.best_gain - 1), v.best_comm)};
    const std::string& variable = s.env.begin()->first;
    const auto seen = by_variable.find(variable);
    if (seen == by_variable.end() || v.best_gain > seen->second.first)
      by_variable[variable] = {v.best_gain, std::move(w)};
  }
  std::vector<WithheldSetting> out;
  for (auto& [variable, best] : by_variable) out.push_back(std::move(best.second));
  return out;
}

}  // namespace nccltune
