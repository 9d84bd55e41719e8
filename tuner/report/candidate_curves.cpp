#include "report/candidate_curves.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "search/objective.h"
#include "search/trial.h"

namespace nccltune {

namespace {

// The entry's busbw of `op` when it qualifies (see the header); nullopt otherwise.
std::optional<std::vector<double>> qualifying_busbw(const Profile& profile, const ProfileResults& results,
                                                    const JournalEntry& entry, const std::string& op) {
  const ProfileShape& shape = profile.shape;
  if (entry.node_type_key != shape.node_type_key || entry.outcome != TrialOutcome::ok) return std::nullopt;
  if (!entry.nccl_version.empty() && !shape.nccl_version.empty() && entry.nccl_version != shape.nccl_version)
    return std::nullopt;
  if (entry.env.empty() || entry.env == profile.env) return std::nullopt;
  std::vector<std::uint64_t> sizes;
  const std::vector<std::string> ops = journal_points(entry, sizes);
  // A pair-mode entry stands for its env by the env's own measurement (a halving run's "NCCL/own"
  // points): the pairs it forced after that are no candidate's.
  std::size_t first = 0, end = ops.size();
  if (!entry.pairs.empty()) {
    const auto own =
        std::find(entry.pairs.begin(), entry.pairs.end(), kNcclOwnChoice.algo + "/" + kNcclOwnChoice.proto);
    const auto k = static_cast<std::size_t>(own - entry.pairs.begin());
    if (own == entry.pairs.end() || k >= entry.pair_outcomes.size() ||
        entry.pair_outcomes[k] != TrialOutcome::ok)
      return std::nullopt;
    const std::size_t each = ops.size() / entry.pairs.size();
    first = k * each;
    end = first + each;
  }
  std::vector<std::uint64_t> op_sizes;
  std::vector<double> busbw;
  for (std::size_t i = first; i < end; ++i)
    if (ops[i] == op) {
      op_sizes.push_back(sizes[i]);
      busbw.push_back(entry.busbw[i]);
    }
  if (op_sizes.empty() || op_sizes != results.sizes) return std::nullopt;
  if (!std::all_of(busbw.begin(), busbw.end(), [](double b) { return std::isfinite(b); }))
    return std::nullopt;
  return busbw;
}

}  // namespace

std::vector<CandidateCurve> best_candidates(const Profile& profile, const std::vector<JournalEntry>& journal,
                                            std::size_t count, const std::string& op) {
  const CollectiveProfile* collective = profile.collective(op);
  if (!collective) return {};
  const ProfileResults& results = collective->results;
  std::map<std::map<std::string, std::string>, CandidateCurve> by_env;
  for (const JournalEntry& entry : journal) {
    const std::optional<std::vector<double>> busbw = qualifying_busbw(profile, results, entry, op);
    if (!busbw) continue;
    CandidateCurve& curve = by_env[entry.env];
    if (entry.iterations < curve.iterations) continue;
    if (entry.iterations > curve.iterations || curve.measurements == 0) {
      curve = {entry.env, entry.phase, entry.iterations, 0, std::vector<double>(busbw->size(), 0.0), 0};
    }
    for (std::size_t i = 0; i < busbw->size(); ++i) curve.busbw[i] += (*busbw)[i];
    ++curve.measurements;
  }

  const Result<Objective> parsed = parse_objective(profile.provenance.objective);
  const Objective objective = parsed ? *parsed : Objective::balanced;  // older profiles name none
  const std::vector<std::size_t> sizes(results.sizes.begin(), results.sizes.end());
  std::vector<CandidateCurve> curves;
  for (auto& [env, curve] : by_env) {
    for (double& b : curve.busbw) b /= curve.measurements;
    curve.score = score(objective, sizes, results.baseline, curve.busbw).value;
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
