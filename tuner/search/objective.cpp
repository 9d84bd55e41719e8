#include "search/objective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/statistics.h"

namespace nccltune {
namespace {

bool selected(Objective objective, std::size_t bytes) {
  switch (objective) {
    case Objective::balanced: return true;
    case Objective::bandwidth: return bytes >= kBandwidthMinBytes;
    case Objective::latency: return bytes <= kLatencyMaxBytes;
  }
  return true;
}

double ratio(double baseline, double candidate) {
  if (!std::isfinite(baseline) || baseline <= 0) return 1.0;
  if (!std::isfinite(candidate) || candidate <= 0) return 0.0;
  return candidate / baseline;
}

}  // namespace

Score score(Objective objective, const std::vector<std::size_t>& sizes,
            const std::vector<double>& baseline_busbw, const std::vector<double>& candidate_busbw,
            double tolerance) {
  if (sizes.size() != baseline_busbw.size() || sizes.size() != candidate_busbw.size()) return Score{};
  if (sizes.empty()) return Score{1.0, 1.0, true};
  const bool any_selected =
      std::any_of(sizes.begin(), sizes.end(), [&](std::size_t bytes) { return selected(objective, bytes); });
  std::vector<double> ratios;
  double worst = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (any_selected && !selected(objective, sizes[i])) continue;
    ratios.push_back(ratio(baseline_busbw[i], candidate_busbw[i]));
    worst = std::min(worst, ratios.back());
  }
  Score result;
  result.worst_ratio = worst;
  result.value = geometric_mean(ratios);
  // A hair of slack so that a ratio of exactly 1 - tolerance is acceptable despite rounding; a
  // size that measured nothing (a ratio of 0) is never acceptable, whatever the tolerance.
  result.acceptable = worst > 0 && worst >= 1.0 - tolerance - 1e-12;
  return result;
}

std::vector<double> mean_curve(const std::vector<std::vector<double>>& curves) {
  if (curves.empty()) return {};
  std::vector<double> mean(curves.front().size(), 0.0);
  for (const auto& c : curves)
    for (std::size_t i = 0; i < mean.size() && i < c.size(); ++i)
      mean[i] += c[i] / static_cast<double>(curves.size());
  return mean;
}

}  // namespace nccltune
