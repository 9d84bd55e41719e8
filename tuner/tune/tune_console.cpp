#include "tune/tune_console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "base/duration.h"

namespace nccltune {

TuneConsole::TuneConsole(std::FILE* out, ProgressStyle style) : out_(out) {
  const bool under_open_mpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  tty_ = style == ProgressStyle::line ||
         (style == ProgressStyle::automatic && isatty(fileno(out)) != 0 && !under_open_mpi);
}

void TuneConsole::trial(const StrategyProgress& p, const TrialRequest& request, const TrialMeasurement& m) {
  const std::string outcome = m.cached ? "from journal" : std::string(to_string(m.outcome));
  const std::string best = p.best_gain > 1 ? fmt::format("{:+.1f}%", 100 * (p.best_gain - 1)) : "none yet";
  if (tty_) {
    std::string line =
        fmt::format("trial {} ({}/~{} measured) {:<8} elapsed {} eta {} best {} | {} {}", p.env_trial,
                    p.trial, p.planned, to_string(p.phase), format_duration(p.elapsed_s),
                    format_duration(p.eta_s), best, describe_env(request.env), outcome);
    if (line.size() > 150) line = line.substr(0, 147) + "...";
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "nccltune tune: trial %d %s %s: %s%s (%.2fs)\n", p.env_trial,
                 std::string(to_string(p.phase)).c_str(), describe_env(request.env).c_str(), outcome.c_str(),
                 m.outcome == TrialOutcome::ok ? "" : (": " + m.reason).c_str(), m.duration_s);
  }
  std::fflush(out_);
}

void TuneConsole::finish_line() {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
}

void TuneConsole::message(const std::string& line) {
  finish_line();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace nccltune
