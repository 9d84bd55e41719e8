// What nccltuned makes of NCCL Inspector's Prometheus textfiles on its node (daemon.inspector):
// observe's report (observe/observe_report.h) of the files, folded per communicator shape,
// collective and size bucket into the rows it exports: the observed/tuned busbw ratio (the lowest
// of the shape's communicators: one slow rail is what an operator looks for) and the share of the
// job's collective time in communicators the profile has no section for. Pure: the daemon reads
// the files and finds the profile; these shape and render what it exports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "observe/observe_report.h"

namespace nccltune {

struct WatchedRow {
  std::string shape, collective;  // world, rail, node, other; nccl-tests name
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::optional<double> ratio;       // observed median / the profile's busbw; null: unmeasured
  double unmeasured_time_share = 0;  // of the job's collective time, in rows without a ratio
  friend bool operator==(const WatchedRow&, const WatchedRow&) = default;
};

// Sorted by shape, collective and size.
std::vector<WatchedRow> watched_rows(const ObserveReport& report);

// What the textfiles were: files read, problems (bad lines, unreadable files), and whether a
// profile was found for the job they show.
struct InspectorWatch {
  std::size_t files = 0, problems = 0;
  bool profile = false;
  std::vector<WatchedRow> rows;
};

// The textfile's lines (appended to nccltune.prom, metrics_textfile.h's format):
//   nccltune_inspector_files, nccltune_inspector_problems, nccltune_inspector_profile_found,
//   nccltune_observed_busbw_ratio{shape,collective,min_bytes,max_bytes},
//   nccltune_observed_unmeasured_time_share{shape,collective,min_bytes,max_bytes}
// Label values come from files nccltuned did not write: escaped, and cut at 128 bytes.
std::string render_inspector_metrics(const InspectorWatch& watch);

}  // namespace nccltune
