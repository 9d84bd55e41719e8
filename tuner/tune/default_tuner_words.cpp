#include "tune/default_tuner_words.h"

namespace nccltune {

namespace {

// The tuner the baselines run under, in words; "" when none.
std::string baseline_tuner(const std::optional<NcclTunerLibrary>& found, const std::optional<std::string>& logged) {
  if (loads_a_tuner(found)) return describe_default_tuner(found);
  if (logged) return "the probe trial's NCCL loaded " + *logged;
  return "";
}

}  // namespace

std::string default_tuner_header(const std::optional<NcclTunerLibrary>& found,
                                 const std::optional<std::string>& logged, bool pair_mode) {
  const std::string tuner = baseline_tuner(found, logged);
  if (tuner.empty()) return "NCCL's default tuner: " + describe_default_tuner(found);
  std::string line = "NCCL's default tuner: " + tuner;
  if (loads_a_tuner(found) && logged) line += " (NCCL's log: " + *logged + ")";
  line += ": baselines run under it, as jobs that leave NCCL_TUNER_PLUGIN unset do";
  if (pair_mode) line += "; pair-mode trials replace it with nccltune's tuner plugin (NCCL loads one tuner)";
  return line;
}

std::string default_tuner_note(const std::optional<NcclTunerLibrary>& found,
                               const std::optional<std::string>& logged) {
  const std::string tuner = baseline_tuner(found, logged);
  if (tuner.empty()) return "";
  return "measured under NCCL's default tuner (" + tuner +
         "): NCCL's defaults and env are its choices here; per_size, served by nccltune's tuner plugin, "
         "replaces it";
}

}  // namespace nccltune
