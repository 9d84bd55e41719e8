// The node_exporter textfile of nccltuned (Prometheus text exposition format 0.0.4): every
// metric named nccltune_*, with HELP and TYPE lines, label values escaped. Pure: the daemon
// writes the text to <metrics_dir>/nccltune.prom atomically (the collector reads only *.prom,
// so the temp file is never scraped).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "daemon/node_env.h"
#include "node/node_state.h"

namespace nccltune {

// `scanned_at_unix`: the scan's time in seconds since the epoch (node.yaml's scanned_at), which
// the active profile's age is measured from; `profile`: the single-node profile nccl.env holds;
// `observed`: what NCCL said of the network in the key's newest profile that recorded it.
std::string render_metrics_textfile(const NodeState& state, const std::optional<ActiveProfile>& profile,
                                    double scanned_at_unix,
                                    const std::optional<ObservedNetwork>& observed = std::nullopt);

// Label value escaping of the text format: backslash, double quote and newline.
std::string escape_label_value(std::string_view value);

}  // namespace nccltune
