// The tuner plugin in a tune run: whether it can run here (pair mode and the confirmation of what
// it delivers both need it), and the A/B rounds in fresh workers that decide which per-size
// choices it delivers (tune_profile/plugin_confirmation.h judges them).
#pragma once

#include <string>

#include "base/result.h"
#include "mpi_runtime/rank_group.h"
#include "mpi_runtime/trial_runner.h"
#include "profile/profile.h"
#include "search/strategy.h"
#include "tune/tune_console.h"
#include "tune/tune_job.h"

namespace nccltune {

// Pair mode and the confirmation of what the plugin delivers need tuner API v3 or later (NCCL
// 2.22) and nccltune's tuner plugin, next to this program on every node, loaded and asked by
// this NCCL: a one-pair trial at 1 KiB under it must have run its pair. Every rank calls it. The
// plugin's path, or why neither runs.
Result<std::string> usable_tuner_plugin(RankGroup& group, const TrialRunner& run, TrialSpec spec,
                                        int nccl_version);

// Fresh processes decide what the plugin delivers: A/B rounds of the defaults against env + the
// plugin serving `profile`, at the final grid's sizes and, inside every per_size range, at sizes
// off it (its edges, half-octave steps: tune_profile/confirmation_sizes.h). A per_size range the
// plugin did not serve somewhere, or that loses to the defaults beyond the tolerance somewhere,
// is cut back to where it held, or leaves the profile when it held nowhere; the rounds run once
// more on what is left, and what they withhold then leaves too. A round that fails under the
// plugin clears per_size: NCCL's own choices stand. Nothing runs without a usable plugin
// (`o.tuner_plugin`) or per-size choices. The rounds' trials are counted in `summary` (numbered on from the strategy's on the
// console) and in the profile's provenance; a round that failed is one of its failed configs.
void confirm_with_plugin(const TuneOptions& o, const TrialExecutor& execute, Profile& profile,
                         StrategyResult& summary, TuneConsole& console);

}  // namespace nccltune
