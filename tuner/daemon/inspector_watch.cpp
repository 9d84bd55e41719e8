#include "daemon/inspector_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "daemon/metrics_textfile.h"

namespace nccltune {

namespace {

using WatchKey = std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>;

std::string watch_labels(const WatchedRow& row) {
  const auto value = [](const std::string& text) { return escape_label_value(text.substr(0, 128)); };
  return fmt::format("shape=\"{}\",collective=\"{}\",min_bytes=\"{}\",max_bytes=\"{}\"", value(row.shape),
                     value(row.collective), row.min_bytes, row.max_bytes);
}

}  // namespace

std::vector<WatchedRow> watched_rows(const ObserveReport& report) {
  std::map<WatchKey, WatchedRow> rows;
  for (const ObserveCommunicatorReport& communicator : report.communicators)
    for (const ObserveRow& observed : communicator.rows) {
      WatchedRow& row =
          rows[{communicator.shape, observed.collective, observed.min_bytes, observed.max_bytes}];
      row.shape = communicator.shape;
      row.collective = observed.collective;
      row.min_bytes = observed.min_bytes;
      row.max_bytes = observed.max_bytes;
      if (observed.ratio)
        row.ratio = row.ratio ? std::min(*row.ratio, *observed.ratio) : *observed.ratio;
      else
        row.unmeasured_time_share += observed.time_share;
    }
  std::vector<WatchedRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

std::string render_inspector_metrics(const InspectorWatch& watch) {
  std::string text;
  const auto family = [&](std::string_view name, std::string_view help) {
    text += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  };
  family("nccltune_inspector_files", "NCCL Inspector textfiles read this interval (daemon.inspector.dir).");
  text += fmt::format("nccltune_inspector_files {}\n", watch.files);
  family("nccltune_inspector_problems",
         "Lines or files of NCCL Inspector's output skipped or read past this interval (the journal names "
         "them).");
  text += fmt::format("nccltune_inspector_problems {}\n", watch.problems);
  family("nccltune_inspector_profile_found",
         "1 when the profile store has a profile for the job Inspector shows.");
  text += fmt::format("nccltune_inspector_profile_found {}\n", watch.profile ? 1 : 0);
  family("nccltune_observed_busbw_ratio",
         "Observed median busbw over the profile's, per communicator shape, collective and size bucket "
         "(the lowest of the shape's communicators).");
  for (const WatchedRow& row : watch.rows)
    if (row.ratio)
      text += fmt::format("nccltune_observed_busbw_ratio{{{}}} {:.6g}\n", watch_labels(row), *row.ratio);
  family("nccltune_observed_unmeasured_time_share",
         "Share of the job's collective time in rows the profile has no busbw for (an unmeasured shape or "
         "size).");
  for (const WatchedRow& row : watch.rows)
    if (row.unmeasured_time_share > 0)
      text += fmt::format("nccltune_observed_unmeasured_time_share{{{}}} {:.6g}\n", watch_labels(row),
                          row.unmeasured_time_share);
  return text;
}

}  // namespace nccltune
