// `nccltune report PROFILE -o FILE --summary`: what a tune found, for the end of a console run (the
// demo's last lines): the fleet's suspects, what ships, the gain with and without the tuner
// plugin per collective, and the HTML pages. From the profile's view (profile_view.h), as the
// report's overview table.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fleet/fleet_survey.h"
#include "profile/profile.h"

namespace nccltune {

struct GlancePage {
  std::string label;  // "report", "fleet"
  std::string path;   // as it should be printed (absolute, for a click in a terminal)
};

// One line for the fleet (when given), one for what ships, one for the settings withheld from env
// (when any), one per collective (the world's gain, then each other shape's on the same line), one
// per page: 9 lines for the demo's four collectives and two pages. Text from the fleet survey and
// the page paths is printed as printable ASCII.
std::string render_at_a_glance(const Profile& profile, const FleetSurvey* fleet,
                               const std::vector<GlancePage>& pages);

}  // namespace nccltune
