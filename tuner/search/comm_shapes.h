// The communicator shapes tune measures (`tune --comms world,rail,node`) as the search sees them:
// one objective name per collective and shape, "all_reduce" for the world and "all_reduce@rail",
// "all_reduce@node" for the splits (docs/ARCHITECTURE.md, "Shapes in one worker"). So the
// strategy scores a candidate over every shape's points, and a setting that slows one shape is no
// better than one that slows one collective; the per-size choices come out per shape. The names
// live above the journal only: shaped_executor turns a request of them into one of plain
// collectives and `comms`, and its measurement back. Nothing that maps names to NCCL's
// collectives (NCCL_ALGO lists, the log's names) may see a shaped name: base_collective first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "search/trial.h"

namespace nccltune {

inline constexpr std::string_view kWorldComm = "world";

// "world,rail,node" (each at most once, any order) -> in the worker's order: world, rail, node.
// The world is always measured: a list without it is an error naming --comms.
Result<std::vector<std::string>> parse_comms(std::string_view list);

// "all_reduce" on the world, "all_reduce@rail" on a rail.
std::string shaped_collective(std::string_view collective, std::string_view comm);
// "all_reduce@rail" -> "all_reduce"; a plain name is its own.
std::string base_collective(std::string_view name);
// "all_reduce@rail" -> "rail"; a plain name is the world's.
std::string collective_comm(std::string_view name);
// Every collective of `collectives` on every comm of `comms`, communicator by communicator.
std::vector<std::string> shaped_collectives(const std::vector<std::string>& collectives,
                                            const std::vector<std::string>& comms);
// The plain collectives of `names`, each once, in their first order.
std::vector<std::string> base_collectives(const std::vector<std::string>& names);

// The request as the journal and the worker take it: its plain collectives and the communicators
// its names ask for (world first).
TrialRequest unshaped_request(const TrialRequest& shaped);
// The measurement of `unshaped_request(shaped)` as `shaped` asked: each point named by its
// collective and communicator, and only the points `shaped` names (a request of some collectives
// on some shapes is measured as their cross product).
TrialMeasurement shaped_measurement(const TrialMeasurement& m, const TrialRequest& shaped);
// `execute` behind shaped names.
TrialExecutor shaped_executor(TrialExecutor execute);

}  // namespace nccltune
