// `nccltune bench --nccl-lib NEW --baseline-nccl-lib OLD` (docs/ARCHITECTURE.md, "Before an NCCL
// upgrade"): two NCCL libraries measured in interleaved rounds of fresh workers, compared size by
// size as plain values. Each point's busbw is the mean of its rounds; the ratio NEW/OLD is judged
// against the noise: the tune's noise floor (each round's geometric mean against the median of
// its library's rounds, at least 0.5%), or a size's own spread over its rounds where that is wider.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/statistics.h"

namespace nccltune {

inline constexpr double kUpgradeNoiseFloor = kMinNoise;  // the tune's (base/statistics.h)
inline constexpr double kDefaultMaxRegressionPercent = 3;

// Per round, the busbw at each point (ops[i] at sizes[i]); every round of one length.
using RoundCurves = std::vector<std::vector<double>>;

struct UpgradeLibrary {
  std::string library;  // the path as given
  std::string version;  // "2.28.9", from ncclGetVersion
};

struct UpgradeInput {
  UpgradeLibrary old_nccl, new_nccl;
  std::vector<std::string> ops;
  std::vector<std::uint64_t> sizes;
  RoundCurves old_rounds, new_rounds;
  // --profile: the same rounds with the profile's env and nccltune's tuner plugin; empty without.
  RoundCurves old_profile_rounds, new_profile_rounds;
  std::string profile_path;
  std::string profile_nccl;  // the NCCL major.minor the profile was tuned on ("2.28"), may be empty
  double max_regression_percent = kDefaultMaxRegressionPercent;
};

enum class UpgradeVerdict { same, regression, improvement };
std::string_view to_string(UpgradeVerdict verdict);  // "same within noise", "regression", "improvement"
std::optional<UpgradeVerdict> parse_upgrade_verdict(std::string_view text);

struct UpgradeRow {
  std::string op;
  std::uint64_t bytes = 0;
  double old_busbw = 0, new_busbw = 0;
  double ratio = 1;  // new / old; 0 when NEW measured nothing, 1 when OLD did not
  double noise = kUpgradeNoiseFloor;
  UpgradeVerdict verdict = UpgradeVerdict::same;
  bool beyond_limit = false;  // a regression beyond --max-regression as well: exit 1
  // --profile: each library's busbw with the profile
  std::optional<double> old_profile_busbw, new_profile_busbw;
};

// Per op: the geometric mean of its ratios and its worst size.
struct UpgradeOpSummary {
  std::string op;
  double geomean = 1;
  std::uint64_t worst_bytes = 0;
  double worst_ratio = 1;
};

// --profile: what the profile gives on each library (geometric mean of profile / defaults), and
// the operator's decision in one line.
struct ProfileOnUpgrade {
  std::string path, nccl;
  double old_gain = 1, new_gain = 1;
  bool helps_on_new = false;
  std::string recommendation;
};

struct UpgradeComparison {
  UpgradeLibrary old_nccl, new_nccl;
  int rounds = 0;
  double max_regression_percent = kDefaultMaxRegressionPercent;
  double noise = kUpgradeNoiseFloor;
  std::vector<UpgradeRow> rows;
  std::vector<UpgradeOpSummary> ops;
  std::optional<ProfileOnUpgrade> profile;
  bool regressed() const;  // some row beyond the limit
};

UpgradeComparison compare_upgrade(const UpgradeInput& input);

// Each op's geometric mean and worst size, in the order the rows name the ops.
std::vector<UpgradeOpSummary> summarize_upgrade(const std::vector<UpgradeRow>& rows);

// "2.29.1" -> "2.29"; the text itself when it has no second dot.
std::string nccl_major_minor(std::string_view version);

// The table bench prints: per op, size, OLD busbw, NEW busbw, ratio, verdict (and with a profile,
// NEW + profile and its gain), then the op's geometric mean and worst size; at the end the sizes
// beyond the limit, or that there are none, and with a profile the recommendation.
std::string render_upgrade_table(const UpgradeComparison& comparison);

}  // namespace nccltune
