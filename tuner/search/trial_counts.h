// How a tune's measurements add up, each number named as what it is (README, "What a trial is"):
//  - a *trial* is one run of fresh workers (one per rank) under one env: a screening, halving or
//    confirmation run, a confirmation round with the tuner plugin, and a pair-mode run alike;
//  - a *pair* is one sweep of a pair-mode trial inside its one communicator: an NCCL_ALGO x
//    NCCL_PROTO pair forced through nccltune's tuner plugin, or NCCL's own choice under the env;
//  - a *failed config* is one entry of the profile's `failed` list: a setting (an env, or an env
//    with one pair) that crashed, hung, failed init or gave wrong data, named once however often.
// The strategy's budget (`--max-trials`) counts trials and pairs together, since each pair costs
// a sweep; these counts are what the summary, `show` and the profile say.
#pragma once

#include <cstddef>
#include <string>

#include "search/trial.h"

namespace nccltune {

struct TrialCounts {
  int trials = 0;        // runs of fresh workers, cached or measured, failed or not
  int from_journal = 0;  // of them, answered by the journal (--resume)
  int pairs = 0;         // pairs measured in a communicator by the pair-mode trials that ran
  bool operator==(const TrialCounts&) const = default;
};

// Counts one trial the executor answered.
void count_trial(TrialCounts& counts, const TrialRequest& request, const TrialMeasurement& m);

// "41 env trials (3 from the journal) and 51 pairs measured in a communicator, 2 failed configs";
// without pairs, "41 env trials, 2 failed configs".
// `failed_configs`: the entries of the profile's `failed` list.
std::string describe_trial_counts(const TrialCounts& counts, std::size_t failed_configs);

}  // namespace nccltune
