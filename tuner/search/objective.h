// What "faster" means when the tuner compares a candidate with NCCL's defaults: a score over the
// per-size bus bandwidths of both, measured over the same sizes, and the noise floor that a gain
// has to beat.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "profile/profile.h"  // Objective

namespace nccltune {

inline constexpr std::size_t kBandwidthMinBytes = std::size_t{1} << 20;  // bandwidth: sizes >= 1 MiB
inline constexpr std::size_t kLatencyMaxBytes = std::size_t{64} << 10;   // latency: sizes <= 64 KiB

struct Score {
  double value = 0;         // higher is better; 1.0 == same as baseline
  double worst_ratio = 0;   // min over the objective's sizes of candidate/baseline busbw
  bool acceptable = false;  // no size of the objective worse than (1 - tolerance)
};

// Per-size busbw of the baseline (NCCL defaults) and of a candidate over the same sizes.
// The objective's sizes: balanced, all; bandwidth, those >= 1 MiB; latency, those <= 64 KiB (all
// sizes when none qualifies). value = geometric mean of candidate/baseline over those sizes;
// worst_ratio = their minimum; acceptable = worst_ratio >= 1 - tolerance.
// A size whose baseline busbw is <= 0 or not finite says nothing and counts as ratio 1; a size
// where the candidate's busbw is <= 0 or not finite (and the baseline's is not) counts as ratio 0,
// which makes value 0. The three vectors must have the same length, else the score is
// {0, 0, false}; no sizes at all give {1, 1, true}.
Score score(Objective objective, const std::vector<std::size_t>& sizes,
            const std::vector<double>& baseline_busbw, const std::vector<double>& candidate_busbw,
            double tolerance = 0.02);

// Per point, the mean of `curves` (repeated runs of one config, each a busbw per point, all of
// one length); empty for no curves.
std::vector<double> mean_curve(const std::vector<std::vector<double>>& curves);

}  // namespace nccltune
