#include "tune/tune_console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/byte_size.h"
#include "base/duration.h"
#include "collectives/bench_peak.h"
#include "profile/nccl_names.h"
#include "profile/size_ranges.h"

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
    std::string line = fmt::format("trial {}/~{} {:<8} elapsed {} eta {} best {} | {} {}", p.trial, p.planned,
                                   to_string(p.phase), format_duration(p.elapsed_s), format_duration(p.eta_s),
                                   best, describe_env(request.env), outcome);
    if (line.size() > 150) line = line.substr(0, 147) + "...";
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "nccltune tune: trial %d %s %s: %s%s (%.2fs)\n", p.trial,
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

StrategyResult collective_result(const StrategyResult& r, const std::string& op) {
  StrategyResult out;
  out.env = r.env;
  out.keep_defaults = r.keep_defaults;
  for (std::size_t i = 0; i < r.ops.size() && i < r.sizes.size(); ++i) {
    if (r.ops[i] != op) continue;
    out.ops.push_back(op);
    out.sizes.push_back(r.sizes[i]);
    if (i < r.baseline_busbw.size()) out.baseline_busbw.push_back(r.baseline_busbw[i]);
    if (i < r.tuned_busbw.size()) out.tuned_busbw.push_back(r.tuned_busbw[i]);
  }
  if (const auto it = r.per_size.find(op); it != r.per_size.end()) out.per_size[op] = it->second;
  return out;
}

std::vector<std::string> result_collectives(const StrategyResult& r) {
  std::vector<std::string> ops;
  for (const std::string& op : r.ops)
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  return ops;
}

namespace {

std::string collective_table(const StrategyResult& whole, const NcclObserved& observed,
                             const std::string& op) {
  const StrategyResult r = collective_result(whole, op);
  const std::string_view logged = nccl_log_op_name(op).value_or("");
  static const std::vector<SizeChoice> kNone;
  const std::vector<SizeChoice>& per_size = r.per_size.count(op) ? r.per_size.at(op) : kNone;
  const NcclObservation* shipped = observed.shipped ? &*observed.shipped : nullptr;
  auto chose = [&](const std::optional<NcclObservation>& o, std::uint64_t bytes) {
    const std::string choice = o && !logged.empty() ? observed_choice_at(*o, logged, bytes) : "";
    return choice.empty() ? std::string("-") : choice;
  };
  std::string out =
      fmt::format("{:>10}  {:>13}  {:>13}  {:>8}  {:<16}  {}{}\n", "size", "baseline GB/s", "tuned GB/s",
                  "speedup", "NCCL chose", shipped ? "NCCL with env     " : "", "measured best");
  for (size_t i = 0; i < r.sizes.size(); ++i) {
    const double base = i < r.baseline_busbw.size() ? r.baseline_busbw[i] : 0;
    const double tuned = i < r.tuned_busbw.size() ? r.tuned_busbw[i] : 0;
    const SizeChoice* best = choice_for_size(per_size, r.sizes[i]);
    const std::string choice = best ? best->algo + "/" + best->proto : "-";
    out +=
        fmt::format("{:>10}  {:>13.2f}  {:>13.2f}  {:>7.3f}x  {:<16}  {}{}\n", format_byte_size(r.sizes[i]),
                    base, tuned, base > 0 ? tuned / base : 1.0, chose(observed.defaults, r.sizes[i]),
                    shipped ? fmt::format("{:<16}  ", chose(observed.shipped, r.sizes[i])) : "", choice);
  }
  return out;
}

}  // namespace

std::string render_tune_summary(const StrategyResult& r, const NcclObserved& observed) {
  const std::vector<std::string> ops = result_collectives(r);
  std::string out;
  for (const std::string& op : ops) {
    if (ops.size() > 1) out += op + ":\n";
    out += collective_table(r, observed, op);
  }
  out += fmt::format("env: {}\n", r.keep_defaults ? "keep NCCL's defaults" : describe_env(r.env));
  out += fmt::format("objective {:.3f}x over the defaults, worst size {:.3f}x; {}\n", r.score.value,
                     r.score.worst_ratio, r.confirmation);
  out +=
      fmt::format("{} trials ({} from the journal), {} failed\n", r.trials, r.cached_trials, r.failed_trials);
  for (const auto& f : r.failed)
    out += fmt::format("  failed: {}: {}: {}\n", describe_env(f.env), to_string(f.outcome), f.reason);
  out += render_nccl_observed_lines(observed);
  return out;
}

std::string render_peak_line(const StrategyResult& whole, const std::string& op, const LineRate& peak) {
  const StrategyResult r = collective_result(whole, op);
  const std::string name = result_collectives(whole).size() > 1 ? op + " peak" : "peak";
  if (!peak.gbps) return name + ": unknown (" + peak.unknown_reason.value_or("?") + ")";
  std::string line = fmt::format("{}: {:g} GB/s ({})", name, *peak.gbps, peak.bottleneck.value_or("?"));
  if (r.sizes.empty() || *peak.gbps <= 0) return line;
  // The tuned curve; the defaults' where the profile keeps them.
  const bool tuned = r.tuned_busbw.size() == r.sizes.size();
  if (!tuned && r.baseline_busbw.size() != r.sizes.size()) return line;
  const double busbw = tuned ? r.tuned_busbw.back() : r.baseline_busbw.back();
  const double percent = 100 * busbw / *peak.gbps;
  line += fmt::format("; {} busbw at {} is {:.2f} GB/s, {:.0f}% of peak", tuned ? "tuned" : "baseline",
                      format_byte_size(r.sizes.back()), busbw, percent);
  if (percent > 100) line += kAbovePeakNote;
  return line;
}

}  // namespace nccltune
