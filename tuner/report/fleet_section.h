// The report's fleet survey (`nccltune report --fleet FILE`, the JSON `nccltune fleet --out`
// writes): a heat map of the nodes' pairs, each cell a pair's busbw as a share of the pairs'
// median and the diagonal each node alone against the nodes' median, with the suspect nodes and
// links and the failed nodes marked on it; then the suspects, links and failed nodes with their
// evidence. On a page of its own (render_fleet_report_html) or in a profile's report.
#pragma once

#include <string>
#include <string_view>

#include "fleet/fleet_survey.h"

namespace nccltune {

// `source`: the survey's path as the user gave it. Every name and evidence line is escaped.
std::string render_fleet_section(const FleetSurvey& survey, std::string_view source);

}  // namespace nccltune
