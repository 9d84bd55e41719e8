// The report's "Observed" section (`nccltune report --observed FILE.json`, what `nccltune observe
// --format json` wrote, report/observation_json.h): what a production job's collectives got
// against what was tuned. The share of the job's collective time per communicator shape (world,
// rail, node, other), the part no profile section measured marked; per collective the observed /
// tuned busbw ratio per size bucket, one line per communicator, with the 1.0 line and the
// tolerance band under it; every row's verdict; the stragglers with the lead they held over the
// others; the suspect hosts. In a profile's report, or on a page of its own.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "report/observation_json.h"

namespace nccltune {

// The shapes in the order the section draws them, each with its share of the job's collective
// time: all of it, and the part in communicators without a profile section.
struct ShapeTimeShare {
  std::string_view shape;
  double share = 0, unmeasured = 0;
  int communicators = 0;
};
std::array<ShapeTimeShare, 4> shape_time_shares(const Observation& observation);

// The mean lead of a straggler per collective it was last in: cost_us over last_share x its
// communicator's matched collectives; 0 when the file does not give the count.
double straggler_lead_us(const ObservationStraggler& straggler, std::uint64_t matched);

// `source`: the file's path as given. Every name from the file is escaped.
std::string render_observed_section(const Observation& observation, std::string_view source);

// `report --observed FILE.json` without a profile: the section alone, under a header that says so.
std::string render_observed_report_html(const Observation& observation, const std::string& source,
                                        const std::string& title, const std::string& generated_by);

}  // namespace nccltune
