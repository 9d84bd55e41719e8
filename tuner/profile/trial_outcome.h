// How one trial ended, agreed by every rank: the vocabulary of the search, the journal and the
// profile's list of failed trials. Strings only where a file holds it.
#pragma once

#include <optional>
#include <string_view>

namespace nccltune {

enum class TrialOutcome { ok, wrong_data, timeout, init_error, crash };

std::string_view to_string(TrialOutcome outcome);                        // "ok", "wrong_data", ...
std::optional<TrialOutcome> parse_trial_outcome(std::string_view name);  // nullopt for any other name

}  // namespace nccltune
