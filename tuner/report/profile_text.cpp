#include "report/profile_text.h"

#include <fmt/format.h>

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
