#include "daemon/observed_drift.h"

#include <fmt/format.h>

namespace nccltune {

std::vector<DriftEntry> ObservedDrift::update(const std::vector<WatchedRow>& rows, double below_ratio,
                                              int intervals) {
  std::map<std::string, int> below;
  std::vector<DriftEntry> drift;
  for (const WatchedRow& row : rows) {
    if (!row.ratio || *row.ratio >= below_ratio) continue;
    const std::string subject =
        fmt::format("{} {} {}-{} bytes", row.shape, row.collective, row.min_bytes, row.max_bytes);
    const auto before = below_.find(subject);
    const int count = (before == below_.end() ? 0 : before->second) + 1;
    below[subject] = count;
    if (count == intervals)
      drift.push_back(
          {"observed_below_tuned", subject,
           fmt::format("{} has run at {:.0f}% of the profile's busbw for {} interval{} (below {:.0f}%)",
                       subject, 100 * *row.ratio, count, count == 1 ? "" : "s", 100 * below_ratio)});
  }
  below_ = std::move(below);
  return drift;
}

}  // namespace nccltune
