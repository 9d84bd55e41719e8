// Renderers of a CheckReport: text for people, JSON (`nccltune/check/v1`) for automation.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topology/checks.h"

namespace nccltune {

// What check's text shows. problems (`nccltune check`): one line per WARN or FAIL, the notes on
// what could not be read, the verdict line with the counts, then the recommended exports.
// every_check (`check --verbose`): the host line, every check with its verdict, GPUDirect RDMA's
// state, the recommended exports, the notes, then the verdict line. JSON always holds every check.
enum class CheckDetail { problems, every_check };

std::string render_check_text(const NodeTopology& topology, const CheckReport& report,
                              CheckDetail detail = CheckDetail::problems);
nlohmann::ordered_json check_to_json(const NodeTopology& topology, const CheckReport& report);

}  // namespace nccltune
