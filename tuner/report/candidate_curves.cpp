#include "report/candidate_curves.h"

#include <algorithm>
#include <cmath>

#include "search/objective.h"

namespace nccltune {

namespace {

bool qualifies(const Profile& profile, const JournalEntry& entry) {
  const ProfileShape& shape = profile.shape;
  if (entry.node_type_key != shape.node_type_key || entry.outcome != TrialOutcome::ok) return false;
  if (!entry.nccl_version.empty() && !shape.nccl_version.empty() && entry.nccl_version != shape.nccl_version)
    return false;
  if (entry.env.empty() || entry.env == profile.env) return false;
  if (entry.sizes != profile.results.sizes || entry.busbw.size() != entry.sizes.size()) return false;
  return std::all_of(entry.busbw.begin(), entry.busbw.end(), [](double b) { return std::isfinite(b); });
}

}  // namespace

std::vector<CandidateCurve> best_candidates(const Profile& profile, const std::vector<JournalEntry>& journal,
                                            std::size_t count) {
  std::map<std::map<std::string, std::string>, CandidateCurve> by_env;
  for (const JournalEntry& entry : journal) {
    if (!qualifies(profile, entry)) continue;
    CandidateCurve& curve = by_env[entry.env];
    if (entry.iterations < curve.iterations) continue;
    if (entry.iterations > curve.iterations || curve.measurements == 0) {
      curve = {entry.env, entry.phase, entry.iterations, 0, std::vector<double>(entry.busbw.size(), 0.0), 0};
    }
    for (std::size_t i = 0; i < entry.busbw.size(); ++i) curve.busbw[i] += entry.busbw[i];
    ++curve.measurements;
  }

  const Result<Objective> parsed = parse_objective(profile.provenance.objective);
  const Objective objective = parsed ? *parsed : Objective::balanced;  // older profiles name none
  const std::vector<std::size_t> sizes(profile.results.sizes.begin(), profile.results.sizes.end());
  std::vector<CandidateCurve> curves;
  for (auto& [env, curve] : by_env) {
    for (double& b : curve.busbw) b /= curve.measurements;
    curve.score = score(objective, sizes, profile.results.baseline, curve.busbw).value;
    curves.push_back(std::move(curve));
  }
  std::sort(curves.begin(), curves.end(), [](const CandidateCurve& a, const CandidateCurve& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.env < b.env;
  });
  if (curves.size() > count) curves.resize(count);
  return curves;
}

}  // namespace nccltune
