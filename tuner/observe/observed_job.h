// What observe keeps of a job's Inspector records, read one at a time (ObserveAccumulator): per
// communicator its ranks and hosts, per collective and power-of-two size bucket the counts, time
// and a busbw sketch, and for stragglers a bounded window of its most recent collectives.
//
// Stragglers without synchronised clocks: every rank records the same collective (communicator id
// + coll_sn) with its own execution time, which includes its wait for the last rank to arrive. So
// the rank with the shortest time arrived last; its lead is the median time of the others minus
// its own. A collective is judged once all n_ranks records of it are in (a tie for the shortest
// time names nobody). Records of one collective come from different files, so each communicator
// holds at most `window` collectives still waiting for ranks (ObserveAccumulator's window, by
// default 4096); when one more arrives, the lowest coll_sn is dropped and counted unmatched (its
// later records, and those of any lower coll_sn not waiting, are read but not matched), as are
// those still waiting at the end. Memory: communicators x window x n_ranks pairs at most.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "observe/busbw_histogram.h"
#include "observe/inspector_prom.h"
#include "observe/inspector_record.h"

namespace nccltune {

inline constexpr std::size_t kDefaultMatchWindow = 4096;

// The power-of-two bucket of a size: k holds [2^k, 2^(k+1) - 1]; 0 also holds 0 bytes.
int size_bucket(std::uint64_t bytes);
std::uint64_t bucket_min_bytes(int bucket);
// Inspector's message size as nccl-tests (and a profile) size `collective`: the whole buffer.
std::uint64_t nccl_tests_bytes(std::string_view collective, std::uint64_t bytes, int n_ranks);
std::uint64_t bucket_max_bytes(int bucket);

struct ObservedRow {
  std::uint64_t records = 0;
  double exec_us = 0;    // summed over the records (every rank's)
  double bytes_sum = 0;  // for the bucket's mean size
  BusbwHistogram busbw;
  // The algorithm/protocol NCCL ran ("Ring/LL128", algo_proto.h) -> samples that say so; only
  // Inspector's Prometheus textfiles say it.
  std::map<std::string, std::uint64_t> ran;
};

struct ObservedRank {
  std::string host, file;
  std::string gpu;  // Prometheus textfiles: "GPU0"; the JSON records do not say
  std::uint64_t pid = 0;
  std::uint64_t last = 0;  // collectives it arrived last in
  double lead_us = 0;      // summed over those: what the others waited for it (their median)
};

struct ObservedCommunicator {
  std::string id, name;
  int n_ranks = 1, nnodes = 1;
  // From Inspector's Prometheus textfiles: no communicator id (the id is made of the job id, the
  // shape and comm_name), no rank (each GPU, node and gpu labels, is a rank, numbered as first
  // seen), no collective sequence number (never matched) and no count of operations (a row's
  // records are its samples, its time the sum of their mean times).
  bool prometheus = false;
  std::map<std::pair<std::string, std::string>, int> gpu_ranks;  // (node, gpu) -> rank
  std::map<int, ObservedRank> ranks;
  // (collective by nccl-tests name, size bucket) -> statistics.
  std::map<std::pair<std::string, int>, ObservedRow> rows;
  std::uint64_t matched = 0, unmatched = 0;
  // coll_sn -> the (rank, exec_us) in so far; at most the window's collectives.
  std::map<std::uint64_t, std::vector<std::pair<int, double>>> waiting;
  // The collectives below it were dropped from the window (counted unmatched once): their later
  // records are not matched.
  std::uint64_t dropped_below = 0;
};

struct ObservedJob {
  std::uint64_t records = 0;
  std::set<std::string> versions, hosts;
  std::map<std::string, ObservedCommunicator> communicators;  // by header.id
  double exec_us = 0;  // every record's, the denominator of time shares
};

// Reads records one at a time; each bad one is a line in problems() naming the file and line, at
// most kProblemsPerFile per file (then one line with how many more), and the rest is still read.
class ObserveAccumulator {
 public:
  static constexpr int kProblemsPerFile = 5;
  explicit ObserveAccumulator(std::size_t window = kDefaultMatchWindow) : window_(window < 1 ? 1 : window) {}

  void add_line(const std::string& file, std::uint64_t line_number, std::string_view text);
  void add_record(const std::string& file, std::uint64_t line_number, const InspectorRecord& record);
  // A line of an Inspector Prometheus textfile (inspector_prom.h); point-to-point samples are
  // skipped, as the JSON records' are.
  void add_prom_line(const std::string& file, std::uint64_t line_number, std::string_view text);
  void add_prom_sample(const std::string& file, std::uint64_t line_number, const InspectorPromSample& sample);
  // Adds a problem line about `file` (not its records: an unreadable file, an empty directory).
  void add_problem(const std::string& line) { problems_.push_back(line); }
  // A problem with one line of `file`, counted against its cap as a bad record is.
  void add_problem_at(const std::string& file, std::uint64_t line_number, const std::string& what) {
    problem(file, line_number, what);
  }
  // Closes the windows (what still waits is unmatched) and the per-file counts of problems.
  ObservedJob finish();
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void problem(const std::string& file, std::uint64_t line_number, const std::string& what);
  // A note once per file and `what` ("unknown label foo (read past)").
  void note_once(const std::string& file, std::uint64_t line_number, const std::string& what);
  void match(ObservedCommunicator& communicator, const InspectorRecord& record);

  std::size_t window_;
  ObservedJob job_;
  std::vector<std::string> problems_;
  std::map<std::string, int> problems_per_file_;
  std::set<std::pair<std::string, std::string>> unknown_reported_;  // (file, note)
  // One job writes one format: the first version read of each is the job's, and the first
  // slurm_job_id of the textfiles.
  std::string json_version_, prom_version_, prom_job_;
};

}  // namespace nccltune
