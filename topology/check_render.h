// Renderers of a CheckReport: text for people, JSON (`nccltune/check/v1`) for automation.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topology/checks.h"

namespace nccltune {

std::string render_check_text(const NodeTopology& topology, const CheckReport& report);
nlohmann::ordered_json check_to_json(const NodeTopology& topology, const CheckReport& report);

}  // namespace nccltune
