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

// The survey in one line, the fleet page's header and the section's first line in a profile's
// report: "8 nodes x 2 GPU · all_reduce at 8M · 8 nodes alone, 28 pairs in 7 rounds · 1 suspect
// node, 1 suspect link, 0 failed" (the survey records no NCCL version or duration).
std::string describe_fleet(const FleetSurvey& survey);

// `source`: the survey's path as the user gave it. Every name and evidence line is escaped.
// `with_description`: describe_fleet's line first (the fleet's own page has it as its header).
std::string render_fleet_section(const FleetSurvey& survey, std::string_view source,
                                 bool with_description = true);

}  // namespace nccltune
