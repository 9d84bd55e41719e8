#include "upgrade/upgrade_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/byte_size.h"
#include "base/statistics.h"

namespace nccltune {
namespace {

bool usable_busbw(double busbw) { return std::isfinite(busbw) && busbw > 0; }

double upgrade_mean_at(const RoundCurves& rounds, std::size_t point) {
  double sum = 0;
  int count = 0;
  for (const auto& round : rounds)
    if (point < round.size()) {
      sum += round[point];
      ++count;
    }
  return count > 0 ? sum / count : 0;
}

double upgrade_median_at(const RoundCurves& rounds, std::size_t point) {
  std::vector<double> at;
  for (const auto& round : rounds)
    if (point < round.size()) at.push_back(round[point]);
  return median(std::move(at));
}

// b / a, 1 when a says nothing, 0 when b measured nothing.
double busbw_ratio(double a, double b) {
  if (!usable_busbw(a)) return 1;
  if (!usable_busbw(b)) return 0;
  return b / a;
}

// The tune's noise rule (base/statistics.h): how far each round's geometric mean lies from the
// median of its library's rounds, at least kMinNoise. A round that measured nothing at some size
// (a geometric mean of 0) says nothing about the spread and is left out.
double rounds_noise(const RoundCurves& rounds, std::size_t points) {
  std::vector<double> scores;
  for (const auto& round : rounds) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < points && i < round.size(); ++i)
      ratios.push_back(busbw_ratio(upgrade_median_at(rounds, i), round[i]));
    const double g = geometric_mean(ratios);
    if (g > 0) scores.push_back(g);
  }
  return noise_of_repeats(scores);
}

// How far one point's rounds lie from their median.
double point_spread(const RoundCurves& rounds, std::size_t point) {
  const double median = upgrade_median_at(rounds, point);
  double spread = 0;
  if (!usable_busbw(median)) return 0;
  for (const auto& round : rounds)
    if (point < round.size() && usable_busbw(round[point]))
      spread = std::max(spread, std::abs(round[point] / median - 1));
  return spread;
}

UpgradeVerdict judge_ratio(double ratio, double noise) {
  if (ratio < 1 - noise) return UpgradeVerdict::regression;
  if (ratio > 1 + noise) return UpgradeVerdict::improvement;
  return UpgradeVerdict::same;
}

std::string signed_upgrade_percent(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

// The sizes of one op where `keep` holds, as "64K-1M" (first to last), or "" when none.
std::string size_span(const std::vector<std::uint64_t>& sizes) {
  if (sizes.empty()) return "";
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  if (*lo == *hi) return format_byte_size(*lo);
  return format_byte_size(*lo) + "-" + format_byte_size(*hi);
}

ProfileOnUpgrade profile_verdict(const UpgradeInput& input, const std::vector<UpgradeRow>& rows) {
  ProfileOnUpgrade p;
  p.path = input.profile_path;
  p.nccl = input.profile_nccl;
  std::vector<double> old_gains, new_gains;
  // Where the profile costs on NEW beyond the noise: per op, those sizes, and the worst ratio.
  std::map<std::string, std::vector<std::uint64_t>> costly;
  std::vector<std::string> costly_order;
  double worst = 1;
  for (const UpgradeRow& row : rows) {
    old_gains.push_back(busbw_ratio(row.old_busbw, row.old_profile_busbw.value_or(0)));
    const double gain = busbw_ratio(row.new_busbw, row.new_profile_busbw.value_or(0));
    new_gains.push_back(gain);
    if (judge_ratio(gain, row.noise) == UpgradeVerdict::regression) {
      if (!costly.count(row.op)) costly_order.push_back(row.op);
      costly[row.op].push_back(row.bytes);
      worst = std::min(worst, gain);
    }
  }
  p.old_gain = geometric_mean(old_gains);
  p.new_gain = geometric_mean(new_gains);
  const std::string to = nccl_major_minor(input.new_nccl.version);
  const std::string tuned = p.nccl.empty() ? "the" : "the " + p.nccl;
  if (!costly.empty()) {
    const bool one_op = std::all_of(rows.begin(), rows.end(), [&](const UpgradeRow& r) { return r.op == rows[0].op; });
    std::string where;
    for (const std::string& op : costly_order)
      where += (where.empty() ? "" : ", ") + (one_op ? "" : op + " ") + size_span(costly[op]);
    p.recommendation = fmt::format("retune for {}: the profile costs {:.0f}% at {}", to, (1 - worst) * 100, where);
  } else if (p.new_gain > 1 + kUpgradeNoiseFloor) {
    bool beyond = false;
    for (std::size_t i = 0; i < rows.size(); ++i) beyond = beyond || new_gains[i] > 1 + rows[i].noise;
    p.helps_on_new = beyond;
  }
  if (costly.empty()) {
    if (p.helps_on_new)
      p.recommendation = fmt::format("extend env.nccl_compatible to {}: {} profile gains {} on {}", to, tuned,
                                     signed_upgrade_percent(p.new_gain), to);
    else
      p.recommendation = fmt::format("retune for {}: {} profile gains nothing on {} beyond the noise", to, tuned, to);
  }
  return p;
}

}  // namespace

std::string_view to_string(UpgradeVerdict verdict) {
  switch (verdict) {
    case UpgradeVerdict::regression:
      return "regression";
    case UpgradeVerdict::improvement:
      return "improvement";
    case UpgradeVerdict::same:
      break;
  }
  return "same within noise";
}

std::optional<UpgradeVerdict> parse_upgrade_verdict(std::string_view text) {
  for (const UpgradeVerdict v : {UpgradeVerdict::same, UpgradeVerdict::regression, UpgradeVerdict::improvement})
    if (to_string(v) == text) return v;
  return std::nullopt;
}

bool UpgradeComparison::regressed() const {
  return std::any_of(rows.begin(), rows.end(), [](const UpgradeRow& r) { return r.beyond_limit; });
}

std::string nccl_major_minor(std::string_view version) {
  const std::size_t first = version.find('.');
  const std::size_t second = first == std::string_view::npos ? first : version.find('.', first + 1);
  return std::string(version.substr(0, second));
}

std::vector<UpgradeOpSummary> summarize_upgrade(const std::vector<UpgradeRow>& rows) {
  std::vector<UpgradeOpSummary> out;
  std::map<std::string, std::vector<double>> ratios;
  for (const UpgradeRow& row : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const UpgradeOpSummary& s) { return s.op == row.op; });
    if (it == out.end()) {
      out.push_back({row.op, 1, row.bytes, row.ratio});
      it = out.end() - 1;
    } else if (row.ratio < it->worst_ratio) {
      it->worst_bytes = row.bytes;
      it->worst_ratio = row.ratio;
    }
    ratios[row.op].push_back(row.ratio);
  }
  for (UpgradeOpSummary& s : out) s.geomean = geometric_mean(ratios[s.op]);
  return out;
}

UpgradeComparison compare_upgrade(const UpgradeInput& input) {
  UpgradeComparison c;
  c.old_nccl = input.old_nccl;
  c.new_nccl = input.new_nccl;
  c.rounds = static_cast<int>(std::min(input.old_rounds.size(), input.new_rounds.size()));
  c.max_regression_percent = input.max_regression_percent;
  const std::size_t points = std::min(input.ops.size(), input.sizes.size());
  c.noise = std::max(rounds_noise(input.old_rounds, points), rounds_noise(input.new_rounds, points));
  const bool with_profile = !input.old_profile_rounds.empty() && !input.new_profile_rounds.empty();
  for (std::size_t i = 0; i < points; ++i) {
    UpgradeRow row;
    row.op = input.ops[i];
    row.bytes = input.sizes[i];
    row.old_busbw = upgrade_mean_at(input.old_rounds, i);
    row.new_busbw = upgrade_mean_at(input.new_rounds, i);
    row.ratio = busbw_ratio(row.old_busbw, row.new_busbw);
    row.noise = std::max({c.noise, point_spread(input.old_rounds, i), point_spread(input.new_rounds, i)});
    row.verdict = judge_ratio(row.ratio, row.noise);
    row.beyond_limit =
        row.verdict == UpgradeVerdict::regression && row.ratio < 1 - input.max_regression_percent / 100;
    if (with_profile) {
      row.old_profile_busbw = upgrade_mean_at(input.old_profile_rounds, i);
      row.new_profile_busbw = upgrade_mean_at(input.new_profile_rounds, i);
      row.noise = std::max({row.noise, point_spread(input.old_profile_rounds, i),
                            point_spread(input.new_profile_rounds, i)});
    }
    c.rows.push_back(std::move(row));
  }
  c.ops = summarize_upgrade(c.rows);
  if (with_profile) c.profile = profile_verdict(input, c.rows);
  return c;
}

std::string render_upgrade_table(const UpgradeComparison& c) {
  std::string out;
  const bool with_profile = c.profile.has_value();
  for (const UpgradeOpSummary& op : c.ops) {
    out += fmt::format("#\n# {}: OLD {} against NEW {}, mean busbw of {} round{} each\n", op.op,
                       c.old_nccl.version, c.new_nccl.version, c.rounds, c.rounds == 1 ? "" : "s");
    std::string head = fmt::format("# {:>12}  {:>10}  {:>10}  {:>7}  {:<17}", "size", "OLD busbw", "NEW busbw",
                                   "ratio", "verdict");
    std::string units = fmt::format("# {:>12}  {:>10}  {:>10}  {:>7}  {:<17}", "(B)", "(GB/s)", "(GB/s)", "NEW/OLD", "");
    if (with_profile) {
      head += fmt::format("  {:>12}  {:>7}", "NEW+profile", "gain");
      units += fmt::format("  {:>12}  {:>7}", "(GB/s)", "/NEW");
    }
    for (std::string* line : {&head, &units}) {
      while (line->back() == ' ') line->pop_back();
      out += *line + "\n";
    }
    for (const UpgradeRow& row : c.rows) {
      if (row.op != op.op) continue;
      std::string line = fmt::format("  {:>12}  {:>10.2f}  {:>10.2f}  {:>7.3f}  {:<17}", row.bytes, row.old_busbw,
                                     row.new_busbw, row.ratio, to_string(row.verdict));
      if (with_profile)
        line += fmt::format("  {:>12.2f}  {:>7.3f}", row.new_profile_busbw.value_or(0),
                            busbw_ratio(row.new_busbw, row.new_profile_busbw.value_or(0)));
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    out += fmt::format("# {}: geometric mean {:.3f} ({}), worst size {} ({:.3f}, {})\n", op.op, op.geomean,
                       signed_upgrade_percent(op.geomean), format_byte_size(op.worst_bytes), op.worst_ratio,
                       signed_upgrade_percent(op.worst_ratio));
  }
  std::vector<std::string> regressed, improved;
  for (const UpgradeRow& row : c.rows) {
    const std::string name = fmt::format("{} {} ({})", row.op, format_byte_size(row.bytes), signed_upgrade_percent(row.ratio));
    if (row.beyond_limit) regressed.push_back(name);
    if (row.verdict == UpgradeVerdict::improvement) improved.push_back(name);
  }
  const auto joined = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
  };
  out += "#\n";
  if (!improved.empty()) out += "# Faster on NEW: " + joined(improved) + "\n";
  if (!regressed.empty())
    out += fmt::format("# Regressions beyond {:g}% and the noise: {}\n", c.max_regression_percent, joined(regressed));
  else
    out += fmt::format("# No size regresses beyond {:g}% and the noise\n", c.max_regression_percent);
  if (c.profile) {
    out += fmt::format("# Profile {}: {} on OLD {}, {} on NEW {}\n", c.profile->path,
                       signed_upgrade_percent(c.profile->old_gain), c.old_nccl.version,
                       signed_upgrade_percent(c.profile->new_gain), c.new_nccl.version);
    out += fmt::format("# The profile {} on NEW. Recommendation: {}\n",
                       c.profile->helps_on_new ? "still helps" : "does not help", c.profile->recommendation);
  }
  return out;
}

}  // namespace nccltune
