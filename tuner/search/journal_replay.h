// Resuming a tune from its journal: the trials a journal holds for one node type and NCCL version,
// and a TrialExecutor that answers those from it (marked `cached`) and journals every trial it
// measures, so a killed run loses at most the trial in flight.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "search/journal.h"
#include "search/trial.h"

namespace nccltune {

// Whose trials a journal line is: the node type key and NCCL version it was measured with, and
// the node count of its communicator.
struct JournalScope {
  std::string node_type_key;
  std::string nccl_version;
  int nodes = 0;
  // Entries without a node count (journals of older runs) were measured on the whole allocation:
  // they count for the scope of that count.
  bool takes_unnumbered = false;
};

// The entries of `scope` (its node type, NCCL and node count), by journal_key (a later entry for
// the same key wins).
std::map<std::string, JournalEntry> resumable_trials(const std::vector<JournalEntry>& entries,
                                                     const JournalScope& scope);

// Answers a request from `cache` when it holds it and `measure_again(request)` is false; else runs
// `measure` and appends the entry to `journal` (a failed append is handed to `warn`).
TrialExecutor journaled_executor(Journal& journal, JournalScope scope,
                                 std::map<std::string, JournalEntry> cache, TrialExecutor measure,
                                 std::function<bool(const TrialRequest&)> measure_again,
                                 std::function<void(const std::string&)> warn);

}  // namespace nccltune
