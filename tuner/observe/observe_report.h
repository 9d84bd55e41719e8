// A job's observed collectives against its profile (nccltune/observe/v1): per communicator its
// shape (world, rail, node, other, in NCCL's terms: Inspector's nnodes is NCCL's node count, an
// NVLink domain on MNNVL racks) and the profile section of that shape, per collective and size
// bucket the observed busbw beside the profile's under what ships, and a verdict; then the
// stragglers (observed_job.h says how they are found).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "observe/observed_job.h"
#include "profile/profile.h"

namespace nccltune {

inline constexpr std::string_view kObserveSchema = "nccltune/observe/v1";
inline constexpr double kDefaultObserveTolerance = 0.1;
// A straggler (a process) arrived last in more than half of the matched collectives it took part
// in, over all its communicators, and in at least this many.
inline constexpr std::uint64_t kMinStragglerCollectives = 10;

enum class ObserveVerdict { as_tuned, below_tuned, not_served, unmeasured };
std::string_view to_string(ObserveVerdict verdict);

struct ObserveRow {
  std::string collective;  // nccl-tests name
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::optional<std::uint64_t> ops;  // null from Prometheus textfiles: they hold no count
  double time_share = 0;             // of every record's execution time
  std::optional<double> busbw_median, busbw_p10;
  std::optional<double> tuned_busbw, ratio;  // the profile's at the bucket's mean size; median / it
  std::string tuned_source;                  // "with_plugin", "tuned", or "" without a value
  // tuned: the profile's choice at the bucket's mean size, "Ring/LL128"; ran: what NCCL ran, most
  // samples first, comma-separated ("Ring/LL128,Tree/LL"): only Inspector's Prometheus textfiles
  // say it (algo_proto), its JSON records do not.
  std::optional<std::string> ran, tuned;
  ObserveVerdict verdict = ObserveVerdict::unmeasured;
  std::string tune;  // unmeasured: the `nccltune tune` line that measures it, where one can
};

struct ObserveCommunicatorReport {
  std::string id, name;
  int n_ranks = 1, nnodes = 1;
  std::vector<std::string> hosts;
  std::string shape;                   // world, rail, node, other
  std::string source;                  // "json" or "prometheus": which of Inspector's outputs
  std::optional<std::string> section;  // the profile's: "rail (2 nodes x 1)"
  std::uint64_t matched = 0, unmatched = 0;
  std::vector<ObserveRow> rows;
};

struct ObserveStraggler {
  int rank = 0;  // in the world communicator; else in `communicator`
  std::string host, file;
  std::optional<std::string> gpu;  // "local rank 1" (its rank in its node's communicator); null unknown
  std::string communicator, communicator_name;  // where it cost the others most
  std::uint64_t last = 0;  // the matched collectives it was last in, in every communicator
  double last_share = 0;   // of the matched collectives it took part in
  double cost_us = 0;     // summed lead over them: what the others waited for it
};

// A host whose network communicators are all slow while its NVLink ones are not (host_suspects.h).
struct ObserveSuspect {
  std::string host, why;
};

struct ObserveContext {
  std::vector<std::string> dirs;
  std::uint64_t records = 0;
  int ranks = 0;
  std::vector<std::string> hosts, inspector_versions;
  std::string profile;  // the profile's file; "" without one
  double tolerance = 0;  // a row below (1 - tolerance) x tuned is below_tuned
};

struct ObserveReport {
  ObserveContext context;
  std::vector<ObserveCommunicatorReport> communicators;
  std::vector<ObserveStraggler> stragglers;
  std::vector<ObserveSuspect> suspects;
};

// The verdict of one row: unmeasured without the profile's busbw; not_served when the record says
// what ran (`ran`, comma-separated) and none of it is the profile's choice; else as_tuned when median >= (1 -
// tolerance) x the profile's, below_tuned otherwise.
ObserveVerdict judge_row(std::optional<double> observed, std::optional<double> tuned_busbw,
                         const std::optional<std::string>& ran, const std::optional<std::string>& tuned,
                         double tolerance);

// The profile's busbw at `bytes` for one collective under what ships: results.with_plugin where it
// has every size, else tuned, linear in log(size) between the two measured sizes around it;
// nullopt outside the measured sizes. `source` says which curve.
std::optional<double> profile_busbw_at(const CollectiveProfile& collective, double bytes,
                                       std::string* source);

// `profile` may be null (every row unmeasured). `profile_file` names it in the context.
ObserveReport build_observe_report(const ObservedJob& job, const std::vector<std::string>& dirs,
                                   const Profile* profile, const std::string& profile_file, double tolerance);

// 2 with a straggler or a suspect, else 1 with a row that is not as_tuned, else 0.
int observe_exit_code(const ObserveReport& report);

// The world communicator's NCCL shape (nodes, ranks) the records show: the communicator with the
// most ranks; {0, 0} without records.
std::pair<int, int> observed_world(const ObservedJob& job);

}  // namespace nccltune
