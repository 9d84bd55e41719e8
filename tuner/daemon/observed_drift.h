// Drift in what jobs get: a watched row (inspector_watch.h) whose observed/tuned ratio stays
// below daemon.inspector.drift_ratio for daemon.inspector.drift_intervals intervals in a row.
// As drift.h's hardware drift, each is reported once, when it starts; a row that recovers, or is
// not seen in an interval (no job ran it), starts counting again. Kind "observed_below_tuned",
// subject "<shape> <collective> <min>-<max> bytes". The daemon logs it; it is not node.yaml's
// drift (that is the hardware against the last good state).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/inspector_watch.h"
#include "node/node_state.h"

namespace nccltune {

class ObservedDrift {
 public:
  // This interval's rows; the drift that starts now.
  std::vector<DriftEntry> update(const std::vector<WatchedRow>& rows, double below_ratio, int intervals);

 private:
  std::map<std::string, int> below_;  // subject -> consecutive intervals below
};

}  // namespace nccltune
