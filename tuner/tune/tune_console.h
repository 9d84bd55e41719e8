// What `tune` shows while it runs: on a terminal one live progress line, otherwise plain log lines.
// The summary at the end is `show`'s rendering of the profile it wrote (report/profile_summary.h).
#pragma once

#include <cstdio>
#include <string>

#include "search/strategy.h"

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

}  // namespace nccltune
