// The best few configurations a tune run measured besides the one it chose, read back from its
// journal, so the report can draw their busbw curves next to the defaults and the tuned profile.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/journal.h"

namespace nccltune {

struct CandidateCurve {
  std::map<std::string, std::string> env;
  TrialPhase phase = TrialPhase::screen;  // the phase of the entries averaged (halving, cross, ...)
  int iterations = 0;                     // their iterations per size
  int measurements = 0;                   // how many entries were averaged
  std::vector<double> busbw;              // per size of the collective's results.sizes
  double score = 0;                       // the profile's objective against its results.baseline
};

// Curves of collective `op`. Entries qualify when they belong to the profile (same shape key; same
// NCCL version when both name one), ended `ok`, measured `op` on exactly the profile's result
// sizes of it with finite busbw, and set a non-empty env other than the profile's own. Per env, the entries
// with the most iterations are averaged size by size (later phases measure longer and replace early screens).
// Sorted by score, best first (ties by env), at most `count`.
std::vector<CandidateCurve> best_candidates(const Profile& profile, const std::vector<JournalEntry>& journal,
                                            std::size_t count, const std::string& op = kAllReduce);

}  // namespace nccltune
