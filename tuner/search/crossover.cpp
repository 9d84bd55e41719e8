#include "search/crossover.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

namespace nccltune {

namespace {

// Why `times` cannot be fitted or compared, or "" when it can: `what` names the candidate.
std::string why_invalid(const MeasuredTimes& times, const std::string& what) {
  if (times.sizes.size() != times.time_us.size())
    return what + ": " + std::to_string(times.sizes.size()) + " sizes but " +
           std::to_string(times.time_us.size()) + " times";
  if (times.sizes.size() < 2)
    return what + ": " + std::to_string(times.sizes.size()) + " point(s), a line needs 2";
  for (std::size_t i = 0; i < times.sizes.size(); ++i) {
    if (i > 0 && times.sizes[i] <= times.sizes[i - 1])
      return what + ": sizes not strictly ascending at " + std::to_string(times.sizes[i]);
    // An unavailable pair (+inf), a failed measurement (0) or garbage (NaN) is no time.
    if (!std::isfinite(times.time_us[i]) || !(times.time_us[i] > 0))
      return what + ": time at " + std::to_string(times.sizes[i]) + " is not a finite time above 0";
  }
  return "";
}

MeasuredTimes window(const MeasuredTimes& times, std::size_t first, std::size_t last) {
  MeasuredTimes out;
  out.sizes.assign(times.sizes.begin() + static_cast<std::ptrdiff_t>(first),
                   times.sizes.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  out.time_us.assign(times.time_us.begin() + static_cast<std::ptrdiff_t>(first),
                     times.time_us.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  return out;
}

// The winner at point i: 0 or 1 where that candidate is strictly faster, nullopt on a tie.
std::optional<std::size_t> winner(const MeasuredTimes& first, const MeasuredTimes& second, std::size_t i) {
  if (first.time_us[i] < second.time_us[i]) return 0;
  if (second.time_us[i] < first.time_us[i]) return 1;
  return std::nullopt;
}

// Slopes this close (relative) are one bandwidth: their crossing would be an artefact of
// rounding, light-years away.
constexpr double kParallel = 1e-9;

}  // namespace

double CostFit::gbps() const {
  return us_per_byte > 0 ? 1e-3 / us_per_byte : 0;  // bytes per us is 1e6 B/s, so 1e-3 GB/s
}

double CostFit::time_us(double bytes) const {
  return latency_us + bytes * us_per_byte;
}

Result<CostFit> fit_cost(const MeasuredTimes& times) {
  if (const std::string why = why_invalid(times, "fit"); !why.empty()) return Error{why};
  // Weighted least squares with weights 1 / t^2 (relative residuals), about the weighted means of
  // size and time so that sizes of 2^30 do not square into rounding error.
  double weights = 0, mean_x = 0, mean_t = 0;
  for (std::size_t i = 0; i < times.sizes.size(); ++i) {
    const double w = 1 / (times.time_us[i] * times.time_us[i]);
    weights += w;
    mean_x += w * static_cast<double>(times.sizes[i]);
    mean_t += w * times.time_us[i];
  }
  mean_x /= weights;
  mean_t /= weights;
  double sxx = 0, sxt = 0;
  for (std::size_t i = 0; i < times.sizes.size(); ++i) {
    const double w = 1 / (times.time_us[i] * times.time_us[i]);
    const double dx = static_cast<double>(times.sizes[i]) - mean_x;
    sxx += w * dx * dx;
    sxt += w * dx * (times.time_us[i] - mean_t);
  }
  CostFit fit;
  fit.us_per_byte = sxt / sxx;  // sxx > 0: at least two distinct sizes
  fit.latency_us = mean_t - fit.us_per_byte * mean_x;
  fit.sizes = times.sizes;
  return fit;
}

FittedSwitch fitted_switch(const CostFit& below, const CostFit& above, std::uint64_t lo, std::uint64_t hi) {
  if (!(below.us_per_byte > 0) || !(above.us_per_byte > 0)) return {hi, CrossoverFit::no_bandwidth};
  const double slopes = below.us_per_byte - above.us_per_byte;
  if (std::abs(slopes) <= kParallel * std::max(below.us_per_byte, above.us_per_byte))
    return {hi, CrossoverFit::parallel};
  // above - below is (latency_above - latency_below) - x * slopes: zero at x. The fits reproduce
  // the measured order only when `below` is the cheaper at lo and no longer at hi: slopes > 0 and
  // lo < x <= hi.
  const double x = (above.latency_us - below.latency_us) / slopes;
  if (!(slopes > 0) || !(x > static_cast<double>(lo)) || !(x <= static_cast<double>(hi)))
    return {hi, CrossoverFit::outside_bracket};
  return {std::clamp(static_cast<std::uint64_t>(std::ceil(x)), lo + 1, hi), CrossoverFit::crossing};
}

std::string_view to_string(CrossoverFit fit) {
  switch (fit) {
    case CrossoverFit::crossing: return "crossing";
    case CrossoverFit::parallel: return "parallel";
    case CrossoverFit::outside_bracket: return "outside-bracket";
    case CrossoverFit::no_bandwidth: return "no-bandwidth";
  }
  return "crossing";
}

Result<std::vector<Crossover>> locate_crossovers(const MeasuredTimes& first, const MeasuredTimes& second,
                                                 std::size_t neighbours) {
  for (const auto& [times, what] : {std::pair{&first, "first"}, std::pair{&second, "second"}})
    if (const std::string why = why_invalid(*times, what); !why.empty()) return Error{why};
  if (first.sizes != second.sizes) return Error{"the two candidates were measured at different sizes"};
  std::vector<Crossover> crossovers;
  const std::size_t n = first.sizes.size();
  std::optional<std::size_t> last;  // the latest decided point
  for (std::size_t i = 0; i < n; ++i) {
    const std::optional<std::size_t> now = winner(first, second, i);
    if (!now) continue;
    if (last && *now != *winner(first, second, *last)) {
      const std::size_t from = *last >= neighbours ? *last - neighbours : 0;
      const std::size_t to = neighbours >= n - 1 - i ? n - 1 : i + neighbours;
      Crossover c;
      c.lo = first.sizes[*last];
      c.hi = first.sizes[i];
      c.below = 1 - *now;
      // Both windows are valid (checked above) and hold at least the bracket's two points.
      c.first = *fit_cost(window(first, from, to));
      c.second = *fit_cost(window(second, from, to));
      const FittedSwitch at = fitted_switch(c.below == 0 ? c.first : c.second,
                                            c.below == 0 ? c.second : c.first, c.lo, c.hi);
      c.bytes = at.bytes;
      c.fit = at.fit;
      crossovers.push_back(std::move(c));
    }
    last = i;
  }
  return crossovers;
}

}  // namespace nccltune
