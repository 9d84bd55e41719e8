// `nccltune observe`'s output: a table per communicator, then the stragglers, for people; the
// same as nccltune/observe/v1 JSON for scripts (docs/ARCHITECTURE.md "File formats").
#pragma once

#include <string>

#include "observe/observe_report.h"

namespace nccltune {

std::string render_observe_text(const ObserveReport& report);
std::string render_observe_json(const ObserveReport& report);

}  // namespace nccltune
