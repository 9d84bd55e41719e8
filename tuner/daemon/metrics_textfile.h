// The node_exporter textfile of nccltuned (Prometheus text exposition format 0.0.4): every
// metric named nccltune_*, with HELP and TYPE lines, label values escaped. Pure: the daemon
// writes the text to <metrics_dir>/nccltune.prom atomically (the collector reads only *.prom,
// so the temp file is never scraped).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/node_env.h"
#include "fleet/fleet_survey.h"
#include "node/node_state.h"

namespace nccltune {

// `scanned_at_unix`: the scan's time in seconds since the epoch (node.yaml's scanned_at), which
// the active profile's age is measured from; `profile`: the single-node profile nccl.env holds;
// `observed`: what NCCL said of the network in the key's newest profile that recorded it.
std::string render_metrics_textfile(const NodeState& state, const std::optional<ActiveProfile>& profile,
                                    double scanned_at_unix,
                                    const std::optional<ObservedNetwork>& observed = std::nullopt);

// The verdict of the last fleet survey (daemon.fleet_survey) for this node, appended to the
// textfile when that key is set. `survey`: null when the file is missing, unreadable or malformed
// (then nccltune_fleet_survey_error 1 and nothing else); `node_names`: the names this node may
// have in it (fleet_node_names); `modified_unix`: the file's mtime in seconds since the epoch.
std::string render_fleet_metrics(const FleetSurvey* survey, const std::vector<std::string>& node_names,
                                 double modified_unix);

// The names a survey may give this node: `nccltune fleet` names nodes by Slurm's node name or the
// host name up to its first dot, so the full host name and its short form, in that order.
std::vector<std::string> fleet_node_names(const std::string& host);

// Label value escaping of the text format: backslash, double quote and newline.
std::string escape_label_value(std::string_view value);

}  // namespace nccltune
