#include "report/profile_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/byte_size.h"

namespace nccltune {

std::string describe_choice(const SizeChoice& choice) {
  std::string text =
      (choice.algo.empty() ? "auto" : choice.algo) + "/" + (choice.proto.empty() ? "auto" : choice.proto);
  if (choice.channels > 0) text += fmt::format(", {} channels", choice.channels);
  return text;
}

std::string describe_range(const SizeChoice& choice) {
  // The exclusive end, when there is one below UINT64_MAX (max_bytes + 1 would wrap there).
  const bool round_end = choice.max_bytes != std::numeric_limits<std::uint64_t>::max() &&
                         choice.max_bytes % 1024 != 0 && (choice.max_bytes + 1) % 1024 == 0;
  const std::string end =
      round_end ? "<" + format_byte_size(choice.max_bytes + 1) : format_byte_size(choice.max_bytes);
  return format_byte_size(choice.min_bytes) + " .. " + end;
}

std::string describe_unmeasured(const CollectiveProfile& collective) {
  return collective.measured.known() ? "above " + format_byte_size(collective.measured.max_bytes) : "";
}

std::string format_size_near(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes), unit_bytes = 1;
  int unit = 0;
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    unit_bytes *= 1024;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes);
  std::string digits = fmt::format("{:.{}f}", value, value >= 100 ? 0 : value >= 10 ? 1 : 2);
  if (digits.find('.') != std::string::npos) {
    digits.erase(digits.find_last_not_of('0') + 1);
    if (digits.back() == '.') digits.pop_back();
  }
  // Exact when the printed digits are the size: 1.25M is 1310720 bytes, 1.1M is not 1152000.
  double printed = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), printed);
  const bool exact = printed * unit_bytes == static_cast<double>(bytes);
  return (exact ? "" : "~") + digits + kUnits[unit];
}

std::string describe_cost_fit(double latency_us, double gbps) {
  if (!(gbps > 0)) return fmt::format("{:.1f} us, flat", latency_us);
  return fmt::format("{:.1f} us + {} GB/s", latency_us,
                     gbps >= 0.1 ? fmt::format("{:.1f}", gbps) : fmt::format("{:.2g}", gbps));
}

namespace {

// Why a switch without a crossing stays where it was measured, by the profile's `fit`.
std::string_view no_crossing_words(std::string_view fit) {
  if (fit == "parallel") return "the fitted costs run parallel, one bandwidth";
  if (fit == "no-bandwidth") return "a fitted time does not grow with size";
  return "the fitted costs do not cross in between";  // outside-bracket
}

}  // namespace

std::string describe_switch(const SwitchView& view) {
  const SizeSwitch& s = view.at;
  const std::string evidence = fmt::format("measured faster: {} at {}, {} at {}; fits: {} {}, {} {}", s.below,
                                           format_size_near(s.lo), s.above, format_size_near(s.hi), s.below,
                                           describe_cost_fit(s.below_latency_us, s.below_gbps), s.above,
                                           describe_cost_fit(s.above_latency_us, s.above_gbps));
  // A range the confirmation cut back no longer ends at the switch: say so, or the line would
  // claim a boundary per_size does not have.
  const std::string_view cut = view.in_per_size ? "" : "; per_size no longer changes range there";
  if (view.crossing)
    return fmt::format("{} -> {} at {}, where the fitted costs cross ({}){}", s.below, s.above,
                       format_size_near(s.bytes), evidence, cut);
  return fmt::format("{} -> {} at {}, as measured: {} ({}; {}){}", s.below, s.above,
                     format_size_near(s.bytes), no_crossing_words(s.fit), s.fit, evidence, cut);
}

std::string format_speedup(double ratio) {
  return std::isfinite(ratio) ? fmt::format("{:.3f}x", ratio) : std::string("n/a");
}

std::string format_busbw(double gbps) {
  return std::isfinite(gbps) ? fmt::format("{:.2f}", gbps) : std::string("n/a");
}

std::string describe_ships(const Profile& profile) {
  return profile.keep_defaults ? "NCCL's defaults (nothing beat them beyond the noise floor)"
         : profile.env.empty() ? "no variables"
                               : describe_env(profile.env);
}

std::string describe_withheld(const WithheldSetting& withheld) {
  return describe_env(withheld.env) + ": " + withheld.why;
}

}  // namespace nccltune
