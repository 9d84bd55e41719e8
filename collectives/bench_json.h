// BenchResult <-> JSON, schema "nccltune/bench/v1" (docs/ARCHITECTURE.md, "File formats"): what
// `nccltune bench --json` writes and `nccltune import` prints. Unknown ranks, nodes, wrong
// counts ("N/A") and versions are null; unknown keys are ignored when reading.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "base/result.h"
#include "collectives/bench_result.h"

namespace nccltune {

inline constexpr std::string_view kBenchSchema = "nccltune/bench/v1";

nlohmann::ordered_json bench_result_to_json(const BenchResult& result);

// Errors name `origin` and the field ("bench.json: rows[2].out_of_place.busbw: not a number").
Result<BenchResult> bench_result_from_json(const nlohmann::ordered_json& document, std::string_view origin);

// The same, from text; a syntax error is an error, not an exception.
Result<BenchResult> parse_bench_json(std::string_view text, std::string_view origin);

}  // namespace nccltune
