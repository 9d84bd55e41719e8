// How tune's ranks run its trials together: rank 0 (the leader) runs the strategy and sends each
// trial to every rank as one broadcast message; the others (followers) run what they are sent
// until rank 0 says stop. The messages are JSON: {"cmd":"trial","request":{...},"nccl_log":bool}
// and {"cmd":"stop","exit":N}.
#pragma once

#include <string>
#include <vector>

#include "search/trial.h"
#include "tune/node_layout.h"
#include "tune/rank_group.h"
#include "tune/trial_runner.h"

namespace nccltune {

// One rank of the job: its group, where the ranks sit, and how one trial runs on every rank.
struct TuneRanks {
  RankGroup& group;
  const NodeLayout& layout;
  const TrialRunner& run;
};

// Runs `spec` on every rank with NCCL's log in a private directory of each rank
// (tune/nccl_log_capture.h); rank 0 gets every rank's text in `rank_logs` (a rank whose directory
// could not be made sends why).
TrialResult run_with_nccl_log(const TuneRanks& ranks, TrialSpec spec, std::vector<std::string>& rank_logs);

// The leader's side of one trial: sends `request` to the followers, runs it here and returns its
// measurement; with `nccl_logs`, every rank runs it with NCCL's log and rank 0 gets the texts.
TrialMeasurement lead_trial(const TuneRanks& ranks, const TrialSpec& spec, const TrialRequest& request,
                            std::vector<std::string>* nccl_logs);

// The followers' side: runs the leader's trials until it says stop; returns the exit code it sent.
int follow(const TuneRanks& ranks, const TrialSpec& spec);

// Tells the followers to stop with `exit_code`, and returns it.
int stop_followers(const TuneRanks& ranks, int exit_code);

}  // namespace nccltune
