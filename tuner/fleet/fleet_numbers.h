// How the survey's numbers are rounded, the one rule attribute() and the JSON writer share, so
// that a survey read back from its JSON is the survey that was written.
#pragma once

#include <cmath>

namespace nccltune {

// `value` to a multiple of 1 / `parts`: round(value x parts) / parts is the double nearest the
// decimal, the one the JSON reader makes of it, and rounding again changes nothing. From 1e15 on a
// double holds no fraction worth rounding (and value x parts could overflow): kept as it is, like
// non-finite values.
inline double fleet_round(double value, double parts) {
  if (!(std::fabs(value) < 1e15)) return value;
  return std::round(value * parts) / parts;
}

inline double round_tenth(double value) {  // GB/s and percents
  return fleet_round(value, 10);
}
inline double round_us(double value) {  // the small size's time: to 0.01 us (a few us matter there)
  return fleet_round(value, 100);
}

}  // namespace nccltune
