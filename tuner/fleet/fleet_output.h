// The survey as a person reads it (a table, worst first, with evidence), as JSON
// (`nccltune/fleet/v1`), and as Slurm drain lines, and the JSON read back (report, nccltuned).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "fleet/fleet_survey.h"

namespace nccltune {

std::string render_fleet_text(const FleetSurvey& survey);
nlohmann::json fleet_to_json(const FleetSurvey& survey);
// One `scontrol update NodeName=<node> State=DRAIN Reason="nccltune fleet: <evidence>"` line per
// suspect or failed node; node names are checked (Slurm host names) and the reason holds only
// characters safe inside double quotes in a shell. nccltune prints these, never runs them.
std::string render_slurm_drain(const FleetSurvey& survey);

// The most parse_fleet_json reads, and read_fleet_survey reads of a file.
inline constexpr std::size_t kMaxFleetJsonBytes = std::size_t{16} << 20;

// Strict: an error is one line naming `origin` and the field ("fleet.json: local[2].busbw_gbps:
// not a number"); every text must be clean (is_clean_text); at most kMaxFleetJsonBytes and
// 100000 nodes. Keys it does not know are ignored.
Result<FleetSurvey> parse_fleet_json(std::string_view text, std::string_view origin);

// The survey file (`nccltune fleet --out`), read bounded and parsed; an error is one line naming
// the file (and the field, when malformed). report --fleet and nccltuned read it so.
Result<FleetSurvey> read_fleet_survey(const std::filesystem::path& file);

}  // namespace nccltune
