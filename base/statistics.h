// The few statistics the project decides with, each defined once: the median of repeated
// measurements, the geometric mean of ratios and the noise rule of repeats. The search, the
// fleet survey, the upgrade comparison and what a tune withheld use these, so a median or a
// noise floor means the same thing in every output.
#pragma once

#include <cstddef>
#include <vector>

namespace nccltune {

// The median: the middle value, or for an even count the mean of the two middle values; 0 for
// no values. Infinities sort last, so a run that measured nothing (an infinite time) weighs
// like one more slow run.
double median(std::vector<double> values);

// The median at each point over several curves of the same points (repeats of one measurement):
// as long as the first curve, each point over the curves that reach it.
std::vector<double> median_curve(const std::vector<std::vector<double>>& curves);

// The geometric mean of ratios: 1 for none, 0 when any ratio is not above 0 (a size that
// measured nothing outweighs every gain elsewhere).
double geometric_mean(const std::vector<double>& ratios);

// The least noise a decision assumes: two measurements of the same thing within 0.5% of each
// other are never told apart, however quiet the repeats were.
inline constexpr double kMinNoise = 0.005;

// The noise rule: how far each repeat's score (its geometric mean against the median of the
// repeats, 1 for a repeat that is the median) lies from 1, the largest of them and at least
// kMinNoise. Scoring on the geometric mean, not per size: a per-size spread would be far wider
// and hide every small but real gain.
double noise_of_repeats(const std::vector<double>& repeat_scores);

}  // namespace nccltune
