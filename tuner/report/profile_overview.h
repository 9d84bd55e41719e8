// A profile at a glance: what it ships and what that buys, one row per collective and
// communicator shape. The report's overview table and `report --summary` both print these rows,
// made of the view `show` and `show --format json` render (report/profile_view.h), so the four
// never disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

// The largest ratio over the sizes and the size it is at.
struct BestSize {
  double ratio = 0;
  std::uint64_t bytes = 0;
};

struct OverviewRow {
  std::string shape;       // "world: 2 nodes x 8 ranks" (describe_section)
  std::string collective;  // "all_reduce"
  bool guard = false;      // measured against the defaults, never tuned
  // The tuner plugin's per-size choices ("0 .. <512K Ring/LL"); empty: the env alone serves it.
  std::vector<std::string> plugin_ranges;
  double env_speedup = 1;                     // results.speedup_geomean
  std::optional<double> with_plugin_speedup;  // results.with_plugin_speedup_geomean, when measured
  std::optional<BestSize> env_best, with_plugin_best;
  std::optional<double> peak_percent;  // percent_of_peak at the largest size
  std::uint64_t largest_bytes = 0;
  std::string peak_note;  // "450 GB/s (NVLink4 x18)", or why the peak is unknown
  // The view's Confirmation in words ("confirmed", "not served", "withheld", "not confirmed",
  // "env only", "guard") and its reason.
  std::string status;
  std::string why;
};

struct ProfileOverview {
  std::string header;  // "2 nodes x 8 GPUs (NVIDIA H100) · NCCL 2.28.9 · 92 trials, 1 failed config · 9m12s"
  std::string ships;   // "NCCL_ALGO=Ring NCCL_PROTO=LL128", "NCCL's defaults (keep them)"
  std::vector<std::string> withheld;  // "NCCL_ALGO=Tree: rail (2 nodes x 1): all_reduce -20% at 1M"
  std::vector<OverviewRow> rows;      // the world's collectives, then each other shape's
};

ProfileOverview profile_overview(const Profile& profile);

}  // namespace nccltune
