#include "profile/trial_outcome.h"

namespace nccltune {

namespace {

constexpr TrialOutcome kOutcomes[] = {TrialOutcome::ok, TrialOutcome::wrong_data, TrialOutcome::timeout,
                                      TrialOutcome::init_error, TrialOutcome::crash};

}  // namespace

std::string_view to_string(TrialOutcome outcome) {
  switch (outcome) {
    case TrialOutcome::ok: return "ok";
    case TrialOutcome::wrong_data: return "wrong_data";
    case TrialOutcome::timeout: return "timeout";
    case TrialOutcome::init_error: return "init_error";
    case TrialOutcome::crash: return "crash";
  }
  return "?";
}

std::optional<TrialOutcome> parse_trial_outcome(std::string_view name) {
  for (TrialOutcome outcome : kOutcomes)
    if (to_string(outcome) == name) return outcome;
  return std::nullopt;
}

}  // namespace nccltune
