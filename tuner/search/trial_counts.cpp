#include "search/trial_counts.h"

#include <fmt/format.h>

namespace nccltune {

void count_trial(TrialCounts& counts, const TrialRequest& request, const TrialMeasurement& m) {
  ++counts.trials;
  if (m.cached) ++counts.from_journal;
  // A pair-mode run that failed as a whole measured no pair: they are measured again, each an
  // env trial of its own.
  if (m.outcome != TrialOutcome::ok) return;
  counts.pairs += static_cast<int>(request.pairs.size());
}

std::string describe_trial_counts(const TrialCounts& counts, std::size_t failed_configs) {
  const auto plural = [](long long n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  std::string text = plural(counts.trials, "env trial", "env trials");
  if (counts.from_journal > 0) text += fmt::format(" ({} from the journal)", counts.from_journal);
  if (counts.pairs > 0)
    text +=
        " and " + plural(counts.pairs, "pair measured in a communicator", "pairs measured in a communicator");
  return text + ", " + plural(static_cast<long long>(failed_configs), "failed config", "failed configs");
}

}  // namespace nccltune
