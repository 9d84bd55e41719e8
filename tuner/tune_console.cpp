#include "tune_console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "byte_size.h"

namespace nccltune {

std::string format_duration(double seconds) {
  const auto total = static_cast<long>(seconds + 0.5);
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

TuneConsole::TuneConsole(std::FILE* out, ProgressStyle style) : out_(out) {
  const bool under_open_mpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  tty_ = style == ProgressStyle::line ||
         (style == ProgressStyle::automatic && isatty(fileno(out)) != 0 && !under_open_mpi);
}

void TuneConsole::trial(const StrategyProgress& p, const TrialRequest& request, const TrialMeasurement& m) {
  const std::string outcome = m.cached ? "from journal" : std::string(to_string(m.outcome));
  const std::string best = p.best_gain > 1 ? fmt::format("{:+.1f}%", 100 * (p.best_gain - 1)) : "none yet";
  if (tty_) {
    std::string line = fmt::format("trial {}/~{} {:<8} elapsed {} eta {} best {} | {} {}", p.trial, p.planned, p.phase,
                                   format_duration(p.elapsed_s), format_duration(p.eta_s), best,
                                   describe_env(request.env), outcome);
    if (line.size() > 150) line = line.substr(0, 147) + "...";
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "nccltune tune: trial %d %s %s: %s%s (%.2fs)\n", p.trial, p.phase.c_str(),
                 describe_env(request.env).c_str(), outcome.c_str(),
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

std::string render_tune_summary(const StrategyResult& r) {
  std::string out = fmt::format("{:>10}  {:>13}  {:>13}  {:>8}  {}\n", "size", "baseline GB/s", "tuned GB/s", "speedup",
                                "best measured algo/proto");
  for (size_t i = 0; i < r.sizes.size(); ++i) {
    const double base = i < r.baseline_busbw.size() ? r.baseline_busbw[i] : 0;
    const double tuned = i < r.tuned_busbw.size() ? r.tuned_busbw[i] : 0;
    std::string choice = "-";
    for (const auto& c : r.per_size)
      if (c.min_bytes <= r.sizes[i] && r.sizes[i] <= c.max_bytes) choice = c.algo + "/" + c.proto;
    out += fmt::format("{:>10}  {:>13.2f}  {:>13.2f}  {:>7.3f}x  {}\n", format_byte_size(r.sizes[i]), base, tuned,
                       base > 0 ? tuned / base : 1.0, choice);
  }
  out += fmt::format("env: {}\n", r.keep_defaults ? "keep NCCL's defaults (nothing beat them beyond noise)" : describe_env(r.env));
  out += fmt::format("objective {:.3f}x over the defaults, worst size {:.3f}x; {}\n", r.score.value, r.score.worst_ratio,
                     r.confirmation);
  out += fmt::format("{} trials ({} from the journal), {} failed\n", r.trials, r.cached_trials, r.failed_trials);
  for (const auto& f : r.failed) out += fmt::format("  failed: {}: {}: {}\n", describe_env(f.env), f.outcome, f.reason);
  return out;
}

}  // namespace nccltune
