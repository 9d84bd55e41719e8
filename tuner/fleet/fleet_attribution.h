// From the measured groups to names: which node is slow (alone, or with every partner), which
// link is slow (a pair slow only together while both nodes are fine with others), which node
// failed (a hang is the node's that hangs in every group it joins, not its partners'), and
// nothing that is within the fleet's own spread between repeats. Pure. The rules in short (the
// top of fleet_attribution.cpp has them whole): a group's value is the median of its repeats; the
// noise is the 90th percentile of the groups' spreads ((max - min) / median); slow is below the
// stage's (or path's) median x min(outlier, 1 - 3 x noise); a node is a suspect when slow alone
// ("local"), slow in every one of 2 or more network pairs ("network") or NVLink pairs inside its
// NVLink domain ("nvlink"); a link is a slow (or failed) pair whose two nodes both ran other pairs
// on its path that no suspect explains. The survey's numbers are rounded as the
// JSON writes them, so that parse_fleet_json(fleet_to_json(s)) == s.
#pragma once

#include "fleet/fleet_survey.h"

namespace nccltune {

FleetSurvey attribute(const FleetInput& input);

// The nodes the failures so far name (local failures, and nodes whose every pair failed), for
// the fleet job to leave out of later rounds.
std::vector<int> failed_nodes(const FleetInput& input);

}  // namespace nccltune
