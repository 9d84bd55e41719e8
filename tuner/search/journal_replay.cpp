#include "search/journal_replay.h"

#include <cstdint>
#include <cstdio>
#include <memory>

namespace nccltune {

namespace {

// FNV-1a of `text`, 16 hex digits: names a profile in a journal line without holding it.
std::string text_hash(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

JournalEntry entry_for(const TrialRequest& r, const JournalScope& scope) {
  JournalEntry e;
  e.node_type_key = scope.node_type_key;
  e.nccl_version = scope.nccl_version;
  e.nodes = scope.nodes;
  e.env = r.env;
  e.phase = r.phase;
  e.iterations = r.iterations;
  e.warmup = r.warmup;
  e.sizes = request_sizes(r);
  e.collectives = r.collectives;
  e.repeat = r.repeat;
  e.comms = r.comms;
  for (const NcclChoice& pair : r.pairs) e.pairs.push_back(pair.algo + "/" + pair.proto);
  if (!r.plugin_profile.empty()) e.plugin_profile = text_hash(r.plugin_profile);
  return e;
}

TrialMeasurement from_journal(const JournalEntry& e) {
  TrialMeasurement m;
  m.cached = true;
  m.outcome = e.outcome;
  m.reason = e.reason;
  m.ops = journal_points(e, m.sizes);
  m.time_us = e.time_us;
  m.busbw = e.busbw;
  m.comms = e.point_comms;
  m.duration_s = e.duration_s;
  m.pair_outcomes = e.pair_outcomes;
  m.unavailable = e.unavailable;
  m.plugin_served = e.plugin_served;
  m.plugin_declined = e.plugin_declined;
  return m;
}

}  // namespace

std::map<std::string, JournalEntry> resumable_trials(const std::vector<JournalEntry>& entries,
                                                     const JournalScope& scope) {
  std::map<std::string, JournalEntry> cache;
  for (const auto& e : entries)
    if (e.node_type_key == scope.node_type_key && e.nccl_version == scope.nccl_version &&
        (e.nodes == scope.nodes || (e.nodes == 0 && scope.takes_unnumbered)))
      cache[journal_key(e)] = e;
  return cache;
}

TrialExecutor journaled_executor(Journal& journal, JournalScope scope,
                                 std::map<std::string, JournalEntry> cache, TrialExecutor measure,
                                 std::function<bool(const TrialRequest&)> measure_again,
                                 std::function<void(const std::string&)> warn) {
  auto held = std::make_shared<const std::map<std::string, JournalEntry>>(std::move(cache));
  return [&journal, scope = std::move(scope), held, measure = std::move(measure),
          measure_again = std::move(measure_again), warn = std::move(warn)](const TrialRequest& request) {
    JournalEntry e = entry_for(request, scope);
    // A plugin trial from a journal that did not record what the plugin served proves nothing.
    if (auto it = held->find(journal_key(e));
        it != held->end() && !measure_again(request) &&
        (request.plugin_profile.empty() || !it->second.plugin_served.empty()))
      return from_journal(it->second);
    TrialMeasurement m = measure(request);
    e.outcome = m.outcome;
    e.reason = m.reason;
    e.point_bytes = m.sizes;
    e.time_us = m.time_us;
    e.busbw = m.busbw;
    e.point_comms = m.comms;
    e.duration_s = m.duration_s;
    e.pair_outcomes = m.pair_outcomes;
    e.unavailable = m.unavailable;
    e.plugin_served = m.plugin_served;
    e.plugin_declined = m.plugin_declined;
    e.workers = m.workers;
    e.communicators = m.communicators;
    if (Status appended = journal.append(e); !appended) warn(appended.error());
    return m;
  };
}

}  // namespace nccltune
