// `nccltune report --upgrade FILE.json -o FILE.html`: a page of one NCCL upgrade check (the -J of
// `bench --baseline-nccl-lib`, upgrade/upgrade_json.h), in the report's style: the two
// libraries, the verdict, and per collective the busbw of OLD and NEW, the ratio NEW/OLD per size
// with the noise band, and a table with each regression marked; with a profile, whether it still
// helps on NEW and the recommendation. Inline CSS and SVG only, every string escaped.
#pragma once

#include <string>

#include "upgrade/upgrade_comparison.h"

namespace nccltune {

// `source`: the JSON's path as given; `title`: a line shown at the top (may be empty).
std::string render_upgrade_report_html(const UpgradeComparison& comparison, const std::string& source,
                                       const std::string& title, const std::string& generated_by);

}  // namespace nccltune
