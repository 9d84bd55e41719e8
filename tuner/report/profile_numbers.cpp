#include "report/profile_numbers.h"

#include <cmath>

namespace nccltune {

double value_at(const std::vector<double>& values, std::size_t i) {
  return i < values.size() ? values[i] : std::nan("");
}

double speedup_of(double base, double tuned) {
  return std::isfinite(base) && base > 0 && std::isfinite(tuned) ? tuned / base : std::nan("");
}

double speedup_at(const ProfileResults& results, std::size_t i) {
  return speedup_of(value_at(results.baseline, i), value_at(results.tuned, i));
}

}  // namespace nccltune
