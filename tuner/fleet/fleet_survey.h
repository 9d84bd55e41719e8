// What `nccltune fleet` measured and what it concluded, as plain values: the input of the
// attribution (each group run's repeated numbers), and the survey it writes (text, JSON
// `nccltune/fleet/v1`, Slurm drain lines). No MPI: the fleet job (tuner/fleet_job) fills the
// samples, fleet_attribution.h turns them into the survey.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nccltune {

inline constexpr const char* kFleetSchema = "nccltune/fleet/v1";

// The operator's thresholds; `check --expect`'s file holds them under the same names.
struct FleetThresholds {
  double min_peak_pct = 80;  // min_peak_pct: busbw below this % of the peak model is a warning
  double outlier = 0.85;     // outlier: slower than this x the fleet's median is slow
  friend bool operator==(const FleetThresholds&, const FleetThresholds&) = default;
};

// One group run: one node alone (local stage, round 0) or two nodes (pairs stage, round >= 1).
// Each repeat measured the collective at the large size (busbw) and at the small size (time).
struct GroupSample {
  std::vector<int> nodes;            // node indexes: one (local) or two (pair)
  int round = 0;                     // 0: local stage
  std::vector<double> busbw_gbps;    // one per repeat, at the large size
  std::vector<double> small_us;      // one per repeat, at the small size
  std::string failure;               // "": ran; else what happened: "hang", "crash", "init_error", "wrong_data", ...
  std::string reason;                // the failure's one line, as the trial runner said it
  // NCCL's own account of the group's communicator (its INFO log, as its first rank printed it):
  // the nodes NCCL counted ("nNodes"), whether it went over multi-node NVLink ("MNNVL 1"), and
  // the first rank's NVLink fabric ("fabric UUID ... cliqueId ..."). Unknown when not read.
  std::optional<int> nccl_nodes{};
  std::optional<bool> mnnvl{};
  std::string fabric_uuid{};          // "": not printed (no NVLink fabric, or not read)
  std::optional<std::uint32_t> clique_id{};
  friend bool operator==(const GroupSample&, const GroupSample&) = default;
};

struct FleetInput {
  std::vector<std::string> hosts;  // node names, by node index
  int gpus_per_node = 1;
  std::string collective = "all_reduce";
  std::uint64_t bytes = 0;        // the large size
  std::uint64_t small_bytes = 0;  // the latency size
  std::optional<double> peak_intra_gbps;  // the peak model's busbw of one node / of two nodes
  std::optional<double> peak_inter_gbps;
  FleetThresholds thresholds;
  std::vector<GroupSample> local;  // one per node that ran the local stage
  std::vector<GroupSample> pairs;  // every pair of every round that ran
  int rounds_planned = 0;
  int rounds_run = 0;
  std::string stopped;  // "": every planned round ran; else why not (the budget)
};

// One node's local stage.
struct LocalResult {
  std::string node;
  std::optional<double> busbw_gbps;   // median of the repeats; null when the group failed
  std::optional<double> small_us;     // median time at the small size
  std::optional<double> pct_of_peak;  // null when the peak is unknown
  std::string verdict;                // "pass", "warn" (below min_peak_pct), "slow" (outlier), "failed"
  std::string domain{};               // its NVLink domain ("clique 0x7ffe", "domain 1"); "": none known
  friend bool operator==(const LocalResult&, const LocalResult&) = default;
};

struct PairResult {
  std::array<std::string, 2> nodes;
  int round = 0;
  std::optional<double> busbw_gbps;  // median of the repeats; null when the group failed
  std::string verdict;               // "pass", "slow", "failed"
  // "nvlink": NCCL counted the pair as one node over multi-node NVLink (both in one NVLink
  // domain); "network": anything else (two nodes as NCCL counts them, or NCCL's account unknown).
  std::string path = "network";
  friend bool operator==(const PairResult&, const PairResult&) = default;
};

struct SuspectNode {
  std::string node;
  // "local" (slow alone), "network" (slow with every partner across the network) or "nvlink"
  // (slow with every partner in its NVLink domain, fine across the network)
  std::string path;
  std::string evidence;  // "3 of 3 pairs at 58-61% of median"
  double busbw_gbps = 0;   // its median (over its pairs on that path, or alone)
  double median_gbps = 0;  // the fleet's median it was held against (that path's)
  std::string domain{};    // its NVLink domain; "": none known
  friend bool operator==(const SuspectNode&, const SuspectNode&) = default;
};

struct SuspectLink {
  std::array<std::string, 2> nodes;
  double busbw_gbps = 0;
  std::string evidence;  // "slow only together: 52% of median; both at 97-101% with others"
  friend bool operator==(const SuspectLink&, const SuspectLink&) = default;
};

struct FailedNode {
  std::string node;
  std::string what;   // "hang", "crash", "init_error", "wrong_data", ...
  std::string stage;  // "local" or "pairs"
  std::string reason;
  friend bool operator==(const FailedNode&, const FailedNode&) = default;
};

struct FleetVerdict {
  std::string level;  // "pass", "warn", "fail"
  std::string check = "fleet";
  std::string message;
  friend bool operator==(const FleetVerdict&, const FleetVerdict&) = default;
};

struct FleetSurvey {
  int nodes = 0;
  int gpus_per_node = 1;
  std::string collective = "all_reduce";
  std::uint64_t bytes = 0;
  std::uint64_t small_bytes = 0;
  std::optional<double> peak_intra_gbps;
  std::optional<double> peak_inter_gbps;
  FleetThresholds thresholds;
  // The references each stage's values are held against (the medians of the nodes alone and of
  // the pairs, as attribution defines them); null when the stage measured nothing.
  std::optional<double> local_median_gbps;
  std::optional<double> pair_median_gbps;    // the network pairs'
  std::optional<double> nvlink_median_gbps;  // the NVLink pairs' (pairs inside one NVLink domain)
  double noise_pct = 0;  // the fleet's own spread between repeats (what nothing within is named for)
  int rounds = 0;        // rounds of pairs that ran
  std::vector<LocalResult> local;
  std::vector<PairResult> pairs;
  std::vector<SuspectNode> suspects;  // worst first
  std::vector<SuspectLink> links;     // worst first
  std::vector<FailedNode> failed;
  std::vector<FleetVerdict> verdicts;
  friend bool operator==(const FleetSurvey&, const FleetSurvey&) = default;
};

// check's exit codes: 0 clean, 1 warnings, 2 a suspect or a failed node (3, bad input, is the
// command's own).
int fleet_exit_code(const FleetSurvey& survey);

}  // namespace nccltune
