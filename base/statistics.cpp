#include "base/statistics.h"

#include <algorithm>
#include <cmath>

namespace nccltune {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::vector<double> median_curve(const std::vector<std::vector<double>>& curves) {
  if (curves.empty()) return {};
  std::vector<double> out(curves.front().size(), 0.0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::vector<double> at;
    for (const auto& curve : curves)
      if (i < curve.size()) at.push_back(curve[i]);
    out[i] = median(std::move(at));
  }
  return out;
}

double geometric_mean(const std::vector<double>& ratios) {
  if (ratios.empty()) return 1;
  double log_sum = 0;
  for (const double r : ratios) {
    if (!(r > 0)) return 0;
    log_sum += std::log(r);
  }
  return std::exp(log_sum / static_cast<double>(ratios.size()));
}

double noise_of_repeats(const std::vector<double>& repeat_scores) {
  double noise = kMinNoise;
  for (const double score : repeat_scores) noise = std::max(noise, std::abs(score - 1));
  return noise;
}

}  // namespace nccltune
