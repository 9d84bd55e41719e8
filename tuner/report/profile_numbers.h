// The numbers a profile's results hold per measured size, read the one way every view and
// renderer of them does: a value the profile does not record is NaN, and so is a ratio to one.
#pragma once

#include <cstddef>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// values[i], or NaN when the list is shorter (a result not recorded).
double value_at(const std::vector<double>& values, std::size_t i);

// tuned / base, or NaN when either is not finite or base is not above zero: show, report and
// diff print that as "n/a".
double speedup_of(double base, double tuned);

// speedup_of(results.baseline[i], results.tuned[i]); NaN when either was not recorded.
double speedup_at(const ProfileResults& results, std::size_t i);

}  // namespace nccltune
