// What `tune` shows: on a terminal one live progress line, otherwise plain log lines; at the end
// a summary table of baseline and tuned bus bandwidth per size.
#pragma once

#include <cstdio>
#include <string>

#include "profile/nccl_observed.h"
#include "search/strategy.h"
#include "topology/peak_model.h"

namespace nccltune {

enum class ProgressStyle { automatic, line, log };

class TuneConsole {
 public:
  // automatic: one live line on a terminal, log lines otherwise. Open MPI gives every rank a
  // pseudo-terminal even when mpirun's own output is a file, so under Open MPI automatic means log.
  TuneConsole(std::FILE* out, ProgressStyle style);
  void trial(const StrategyProgress& progress, const TrialRequest& request,
             const TrialMeasurement& measurement);
  void message(const std::string& line);
  void finish_line();

 private:
  std::FILE* out_;
  bool tty_;
  bool line_open_ = false;
};

// The table (with NCCL's own choice per size when its log showed it: under the defaults, and
// under the shipped env), the env, how it was confirmed, what NCCL's log says of the network and
// its warnings, and where NCCL's choice is not the measured best. One table per collective, under
// its name when there are several.
std::string render_tune_summary(const StrategyResult& result, const NcclObserved& observed);

// "peak: 450 GB/s (NVLink4 x18); tuned busbw at 32M is 380.00 GB/s, 84% of peak", or why the
// peak is unknown, for one collective (nccl-tests name).
std::string render_peak_line(const StrategyResult& result, const std::string& op, const LineRate& peak);

// The result's points (trial.h) of one collective: its sizes, baseline and tuned busbw, and its
// per-size choices.
StrategyResult collective_result(const StrategyResult& result, const std::string& op);
// The collectives of the result's points, in their order.
std::vector<std::string> result_collectives(const StrategyResult& result);

}  // namespace nccltune
