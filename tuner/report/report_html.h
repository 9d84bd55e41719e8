// `nccltune report`: one self-contained HTML page for a profile: summary, chosen settings and
// why, and per collective its busbw curves (defaults, tuned, the best few other candidates),
// speedup and choice per size; the node diagram and the failed trials. Inline CSS and SVG only: no script, no
// font, no URL, so it opens anywhere, offline, and can be mailed or attached to a ticket.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_survey.h"
#include "profile/profile.h"
#include "report/candidate_curves.h"
#include "report/observation_json.h"
#include "topology/node_topology.h"

namespace nccltune {

struct ReportInput {
  Profile profile;
  std::string profile_source;  // the profile's path as the user gave it
  std::string title;           // a heading line above the report, e.g. the demo's "simulated" label
  std::map<std::string, std::vector<CandidateCurve>> candidates;  // by collective
  std::string journal_note;  // where the candidates came from, or why there are none
  std::optional<NodeTopology> topology;
  std::string topology_source;  // where the topology was read from, shown under the diagram
  std::string generated_by;     // "nccltune 0.3.0"
  // The store's profiles of this node type by node count, this one among them (report/
  // node_counts_section.h); empty: no such section.
  std::map<int, Profile> node_counts;
  // `report PROFILE --fleet FILE`: the survey of the nodes the profile is for (report/fleet_section.h).
  std::optional<FleetSurvey> fleet;
  std::string fleet_source;
  // `report PROFILE --observed FILE`: a job observed against it (report/observed_section.h).
  std::optional<Observation> observed;
  std::string observed_source;
};

// Everything from the profile, journal and topology is escaped (they are untrusted input).
std::string render_report_html(const ReportInput& input);

// `report --fleet FILE` without a profile: a page of the survey alone, as an operator makes it
// before any tune. `source`: the survey's path as given; `title` as ReportInput's.
std::string render_fleet_report_html(const FleetSurvey& survey, const std::string& source,
                                     const std::string& title, const std::string& generated_by);

}  // namespace nccltune
