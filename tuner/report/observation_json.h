// Reading what `nccltune observe --format json` wrote (schema nccltune/observe/v1) for `report
// --observed FILE.json`: the job's communicators with their shape and profile section, per
// collective and size bucket the observed busbw against the profile's and the verdict, the
// stragglers and the suspect hosts. The file comes from a job's directory, so it is read as
// untrusted input: the schema and every field the page draws are checked, and the first problem
// is one line naming the file and the field ("obs.json: communicators[1].rows[0].verdict:
// missing"). Fields a newer observe adds are ignored; those an older one did not write (ran,
// tuned, tune, matched, suspects) may be absent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nccltune {

inline constexpr std::string_view kObservationSchema = "nccltune/observe/v1";
inline constexpr std::size_t kMaxObservationJsonBytes = std::size_t{64} << 20;

// observe's default: a row is as tuned when its median busbw is at least (1 - this) x the
// profile's. A file that names its tolerance (context.tolerance) is drawn with that one.
inline constexpr double kObservationDefaultTolerance = 0.1;

struct ObservationRow {
  std::string collective;  // nccl-tests name, as observe writes it
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::uint64_t ops = 0;
  double time_share = 0;  // of the job's collective time, 0..1
  std::optional<double> busbw_median, busbw_p10, tuned_busbw, ratio;
  std::optional<std::string> ran, tuned;  // "Ring/LL128"
  std::string verdict;                    // as_tuned, below_tuned, not_served, unmeasured
  std::string tune;                       // unmeasured: the line that measures it; "" without one
};

struct ObservationCommunicator {
  std::string id, name;
  int n_ranks = 0, nnodes = 0;
  std::vector<std::string> hosts;
  std::string shape;                   // world, rail, node, other
  std::optional<std::string> section;  // the profile's section for the shape; none: unmeasured
  std::uint64_t matched = 0;           // collectives matched across its ranks; 0 when not given
  std::vector<ObservationRow> rows;
};

struct ObservationStraggler {
  int rank = 0;
  std::string host;
  std::optional<std::string> gpu;
  std::string communicator, communicator_name;
  std::optional<double> last;  // the collectives it was last in (observe writes it since it counts by process)
  double last_share = 0;  // of the collectives it took part in, 0..1
  double cost_us = 0;     // what the others waited for it, summed
};

struct ObservationSuspect {
  std::string host, why;
};

struct Observation {
  std::vector<std::string> dirs, hosts, inspector_versions;
  std::uint64_t records = 0;
  int ranks = 0;
  std::optional<std::string> profile;  // the profile observe held the job against
  double tolerance = kObservationDefaultTolerance;
  bool tolerance_given = false;  // context.tolerance was in the file
  std::vector<ObservationCommunicator> communicators;
  std::vector<ObservationStraggler> stragglers;
  std::vector<ObservationSuspect> suspects;
};

// The verdicts and shapes observe writes; anything else in a file is an error.
bool is_observation_verdict(std::string_view verdict);
bool is_observation_shape(std::string_view shape);

// Errors name `origin` and the field.
Result<Observation> parse_observation_json(std::string_view text, std::string_view origin);

// The file at `path` (at most kMaxObservationJsonBytes), parsed.
Result<Observation> read_observation_json(const std::filesystem::path& path);

}  // namespace nccltune
