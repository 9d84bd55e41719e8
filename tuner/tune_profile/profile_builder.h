// The profile a tune run writes, built from the strategy's result: the shape it measured, the env
// it ships, and per collective on each communicator the measured range, the per-size choices and
// the busbw against the defaults (each one's points scored on their own), the hardware peak, how
// it was found.
// Pure: what NCCL's log said (nccl_log/nccl_account.h) is added by the caller, since it is read
// against the profile's own per-size choices.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/strategy.h"
#include "topology/peak_model.h"
#include "tune_profile/cluster_shape.h"

namespace nccltune {

// The facts of the run a result cannot hold.
struct RunFacts {
  std::map<std::string, LineRate> peaks;  // per collective, the lowest node's; missing: unknown
  double duration_s = 0;
  std::string date;  // RFC 3339, UTC
};

// The world's collectives in Profile::collectives, each other communicator's in a section of its
// shape (rail: the profile's nodes x 1 rank; node: 1 node x its ranks per node; rails first), as
// the profile is written and as the tuner plugin reads it. A result of the world alone has no
// sections.
Profile build_profile(const ClusterShape& shape, const StrategyResult& result,
                      const StrategyOptions& strategy, const RunFacts& run);

// The result's points (trial.h) of one collective on one communicator: its sizes, baseline and
// tuned busbw, and its per-size choices.
StrategyResult collective_result(const StrategyResult& result, const ShapedOp& op);
// The collectives and communicators of the result's points, in their order.
std::vector<ShapedOp> result_collectives(const StrategyResult& result);

}  // namespace nccltune
