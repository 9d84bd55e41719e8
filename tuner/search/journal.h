// The tune journal: one JSON line per finished trial (schema nccltune/journal/v1), written with
// O_APPEND and fsynced line by line, so a killed run loses at most the trial in flight and
// `tune --resume` measures nothing again that the journal holds.
//
//   {"schema":"nccltune/journal/v1","shape_key":"...","nccl_version":"2.28.9","nodes":2,"env":{"NCCL_ALGO":"Ring"},
//    "phase":"screen","iterations":20,"warmup":5,"sizes":[8,1024],"collectives":["all_reduce"],
//    "outcome":"ok","reason":"",
//    "time_us":[10.1,12.3],"busbw":[0.0,0.15],"duration_s":3.2,"repeat":0,"workers":4,"communicators":1}
//
// A pair-mode trial adds "pairs":["Ring/LL",...],"pair_outcomes":["ok",...],"unavailable":[0,...];
// a trial under the tuner plugin with a profile adds "plugin_profile":"<hash>",
// "plugin_served":[1,0,...],"plugin_declined":"...". A trial on more communicators than the world
// adds "comms":["world","rail","node"] (the request's) and "point_comms":["world",...,"rail",...]
// (per point); lines without them are the world's.
//
// Non-finite numbers are written as null and read back as NaN.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "profile/trial_outcome.h"
#include "search/trial.h"

namespace nccltune {

inline constexpr std::string_view kJournalSchema = "nccltune/journal/v1";

struct JournalEntry {
  std::string node_type_key, nccl_version;  // the file's "shape_key"
  // The node count of the communicator the trial ran on (tune --node-counts); 0 in journals
  // written before it was recorded, which measured the allocation's count.
  int nodes = 0;
  Env env;  // the trial's NCCL_* settings
  TrialPhase phase = TrialPhase::screen;
  int iterations = 0, warmup = 0;
  std::vector<std::uint64_t> sizes;  // the grid, once for all collectives
  // What the trial measured, in order (absent in older journals: all_reduce alone).
  std::vector<std::string> collectives{kAllReduce};
  TrialOutcome outcome = TrialOutcome::ok;
  std::string reason;
  // Per point (trial.h): each collective in turn over `sizes`; empty when the trial failed early.
  // point_bytes: the size each point measured (nccl-tests rounds a size down to whole elements
  // per rank: all_gather of 8 B on 4 ranks is 0 B); absent in older journals: `sizes`.
  std::vector<std::uint64_t> point_bytes;
  std::vector<double> time_us;  // slowest rank, out-of-place
  std::vector<double> busbw;
  double duration_s = 0;
  int repeat = 0;  // 0.. for repeated measurements of the same config
  // Pair mode (trial.h): the pairs ("Ring/LL"), the points each pair's in turn, per pair its
  // outcome, per point whether NCCL did not offer the pair there. Empty for an env trial.
  std::vector<std::string> pairs;
  std::vector<TrialOutcome> pair_outcomes;
  std::vector<int> unavailable;
  // A trial under the tuner plugin with a profile (trial.h's plugin_profile): that profile's
  // FNV-1a hash, 16 hex digits; empty otherwise.
  std::string plugin_profile;
  // Such a trial's plugin_served (0 or 1 per point) and plugin_declined (trial.h); absent in
  // older journals, whose plugin trials are measured again.
  std::vector<int> plugin_served;
  std::string plugin_declined;
  // The communicators the trial measured on, in order (trial.h's TrialRequest::comms; absent in
  // older journals: the world alone), and per point the one it ran on (empty: every point's is
  // the world).
  std::vector<std::string> comms{"world"};
  std::vector<std::string> point_comms;
  // Start-up cost: worker processes started, communicators created (absent in older journals: 0).
  int workers = 0, communicators = 0;
};

// What resume matches on:
// node_type_key|nccl_version|NAME=value NAME=value (sorted)|phase|iterations|warmup|8,16,...|repeat
// and, unless the trial measured all_reduce alone, |all_reduce,all_gather,...; in pair mode,
// |pairs:Ring/LL,Ring/Simple,...; under the plugin with a profile, |plugin-profile:<hash>; on
// other communicators than the world alone, |comms:world,rail,node; not
// the node count
// (resumable_trials, journal_replay.h, picks the entries of one count).
std::string journal_key(const JournalEntry& entry);

// The entry's points (trial.h): their collectives, and in `sizes` their sizes (point_bytes, or
// the grid's for each collective). None when the numbers do not cover every collective's grid
// on every communicator (per pair: each communicator in turn, each collective over the grid).
std::vector<std::string> journal_points(const JournalEntry& entry, std::vector<std::uint64_t>& sizes);

// One entry as one JSON line, without the newline; and back. Invalid UTF-8 in strings is replaced
// by U+FFFD when writing.
std::string journal_line(const JournalEntry& entry);
Result<JournalEntry> parse_journal_line(std::string_view line);

// Every entry of a journal's text. Blank lines are skipped. A bad LAST line that is the start of
// an entry (a crash mid-write) is dropped and described in `warnings` (when given); any other bad
// line is an error naming origin:line.
Result<std::vector<JournalEntry>> parse_journal(std::string_view text, std::string_view origin,
                                                std::vector<std::string>* warnings = nullptr);

class Journal {
 public:
  // Opens (creating it, 0644) for appending, with O_APPEND | O_CLOEXEC, and takes an exclusive
  // flock so two runs never write one journal. A truncated or corrupt last line left by a crash is
  // cut off first (with a warning in the log), so that it never becomes a corrupt middle line.
  // Anything else is refused and left as it is: a symlink, a FIFO, a file parse_journal refuses.
  static Result<Journal> open(const std::filesystem::path& path);
  // One line, written with one write() and fsynced before returning.
  Status append(const JournalEntry& entry);
  // The entries of the file; a missing file is an error (callers check existence for --resume).
  // A dropped last line is logged as a warning.
  static Result<std::vector<JournalEntry>> read(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }

  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

 private:
  Journal(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace nccltune
