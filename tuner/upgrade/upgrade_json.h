// UpgradeComparison <-> JSON, schema "nccltune/bench-upgrade/v1" (docs/ARCHITECTURE.md, "File
// formats"): what `bench --baseline-nccl-lib ... -J FILE` writes and `report --upgrade FILE`
// reads. Both libraries, each row's busbw on both and its verdict, the per-op summary and, with
// --profile, the profile's gains and the recommendation. Unknown keys are ignored when reading;
// the per-op summary is recomputed from the rows.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/result.h"
#include "upgrade/upgrade_comparison.h"

namespace nccltune {

inline constexpr std::string_view kBenchUpgradeSchema = "nccltune/bench-upgrade/v1";

nlohmann::ordered_json upgrade_to_json(const UpgradeComparison& comparison);

// Errors name `origin` and the field ("upgrade.json: rows[2].new_busbw: not a number").
Result<UpgradeComparison> parse_upgrade_json(std::string_view text, std::string_view origin);

// The file at `path` (a text file of at most kMaxUpgradeJsonBytes), parsed.
inline constexpr std::size_t kMaxUpgradeJsonBytes = std::size_t{16} << 20;
Result<UpgradeComparison> read_upgrade_json(const std::filesystem::path& path);

}  // namespace nccltune
