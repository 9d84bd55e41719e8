// The tuner's result for one cluster shape (schema nccltune/profile/v2 or v3, docs/ARCHITECTURE.md
// "File formats"): the env that `nccltune env` emits and, per collective, the measured range, the
// best measured (algo, proto, channels) per size range, baseline and tuned busbw per size; and how
// it was found. v3 holds that per communicator shape a job makes (the world, one per rail, one per
// node) and the settings withheld from env because they lost on one of them; a profile with only
// the world is written as v2. A v1 file (all_reduce's parts at the top level) is still read.
//
// Profiles are read by job prologs from a shared store, so parsing is strict and defensive:
// documents over 1 MiB, NUL bytes, invalid UTF-8, anchors and aliases, more than one document,
// unknown keys, wrong types, env names outside ^NCCL_[A-Z0-9_]+$ and env values outside
// [A-Za-z0-9_,.:^=+-] are errors, each one line naming the file, the line and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clean_text.h"
#include "base/result.h"
#include "base/status.h"
#include "profile/comm_shape.h"
#include "profile/nccl_observed.h"
#include "profile/trial_outcome.h"

namespace nccltune {

inline constexpr std::string_view kProfileSchema = "nccltune/profile/v2";    // only the world measured
inline constexpr std::string_view kProfileSchemaV3 = "nccltune/profile/v3";  // communicator shapes
inline constexpr std::string_view kProfileSchemaV1 = "nccltune/profile/v1";  // still read: all_reduce only
inline constexpr std::size_t kMaxProfileBytes = std::size_t{1} << 20;

// An environment: variable names and values ("NCCL_ALGO" -> "Ring").
using Env = std::map<std::string, std::string>;

// "NCCL_ALGO=Ring NCCL_PROTO=LL" (sorted by name; values may hold commas); "defaults" for an empty env.
std::string describe_env(const Env& env);

// The collectives a profile may hold, by their nccl-tests names.
inline constexpr std::string_view kCollectiveNames =
    "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce";
inline constexpr const char* kAllReduce = "all_reduce";  // what tune measures when told nothing else
bool is_collective_name(std::string_view name);

// A node type key is a directory name in the store: [A-Za-z0-9._-]+, not "." or "..", at most
// 255 bytes. The one check, for profiles, the store, node.yaml and `env --shape`.
bool is_valid_node_type_key(std::string_view key);
// A node type of a multi-node NVLink system (GB200/GB300 NVL72): its key has a `mnnvl` segment
// between dots ("gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28"). Its jobs' NCCL node count is the
// NVLink domains they span, not their hosts.
bool is_mnnvl_node_type_key(std::string_view key);

// What "faster" means to the search (search/objective.h scores it); the profile records which.
enum class Objective { balanced, bandwidth, latency };
Result<Objective> parse_objective(std::string_view name);  // "balanced", "bandwidth", "latency"
std::string_view to_string(Objective objective);

// The shape in NCCL's terms: `nodes` is NCCL's node count and gpus_per_node its ranks per node.
// On a multi-node NVLink (MNNVL) system (GB200/GB300 NVL72) NCCL counts a whole NVLink domain as
// one node, so a 16-GPU job on 4 trays of one rack is 1 node of 16 ranks on 4 hosts: mnnvl is true
// and hosts (the machines the tune ran on) says 4. Elsewhere a node is a host: mnnvl false,
// hosts 0 (host_count() is then nodes). Both are written only for an MNNVL profile, so every
// other profile reads and writes as before.
struct ProfileShape {
  std::string node_type_key;  // the file's shape.node_type_key; a directory name in the store
                              // (is_valid_node_type_key)
  int nodes = 1, gpus_per_node = 1, ranks = 1;
  int hosts = 0;       // MNNVL: the hosts, a multiple of nodes; 0 otherwise
  bool mnnvl = false;  // NCCL's nodes are NVLink domains spanning hosts
  int host_count() const { return hosts > 0 ? hosts : nodes; }
  std::string gpu;
  bool nvswitch = false;
  int nics_per_node = 0;
  std::string nic;
  std::string gpu_nic_affinity;  // PIX, PXB, ...
  std::string nccl_version;      // "2.28.9"
  std::string cuda_driver;       // "580.159.03"
  bool operator==(const ProfileShape&) const = default;
};

// The shape for people: "2 nodes x 8 GPUs"; an MNNVL profile's "1 NVLink domain of 16 GPUs on 4
// hosts", "2 NVLink domains of 8 GPUs on 4 hosts" (shown by show, report, env and the plugins).
std::string describe_profile_shape(const ProfileShape& shape);
// comm_shape.h's word for the profile's nodes: NVLink domains for an MNNVL profile.
NodeWord node_word(const ProfileShape& shape);
// `role`'s communicator in a job of `shape`, in NCCL's terms, as a section of the profile records
// it: the world is nodes x gpus_per_node; a node (one host's ranks) 1 x ranks / hosts; a rail (one
// rank per host) nodes x hosts / nodes. For a host-counted profile that is shape_in(role, nodes,
// gpus_per_node); on one NVLink domain a rail and a node are the same NCCL shape (1 x 4 on a rack
// of 4 trays of 4 GPUs), which a profile records once.
Shape nccl_shape_in(CommRole role, const ProfileShape& shape);

// One size range. algo / proto: a valid NCCL_ALGO / NCCL_PROTO value, usually one name (Ring,
// Tree, NVLS, ...; LL, LL128, Simple), or empty for NCCL's own choice; channels 0 = NCCL's own
// choice.
struct SizeChoice {
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::string algo, proto;
  int channels = 0;
  // The chunk size measured with this range's algo and proto, for NCCL's getChunkSize (tuner API
  // v6, NCCL 2.30.3+); 0: NCCL's own. Written only when set.
  std::uint64_t chunk_bytes = 0;
  bool operator==(const SizeChoice&) const = default;
};

// Where a per_size choice gives way to the next between two measured sizes, and the evidence: the
// sizes that bracket it (the largest where `below` measured faster, the smallest where `above`
// did), each pair's fitted cost there (NCCL's model, time = latency + bytes / bandwidth;
// search/crossover.h) and the size where those costs cross. `bytes` is where the upper range
// starts: the fitted crossing when `fit` is "crossing", else `hi`, the measured boundary.
struct SizeSwitch {
  std::uint64_t lo = 0, hi = 0, bytes = 0;
  std::string fit;           // "crossing", "parallel", "outside-bracket", "no-bandwidth"
  std::string below, above;  // "Tree/LL128": the choice under `bytes` and from it on
  double below_latency_us = 0, below_gbps = 0;
  double above_latency_us = 0, above_gbps = 0;
  bool operator==(const SizeSwitch&) const = default;
};

// The message sizes the tune measured, smallest and largest. Per-size choices and NCCL_ALGO /
// NCCL_PROTO lists hold within it only: above max_bytes NCCL's own choice stands.
struct MeasuredRange {
  std::uint64_t min_bytes = 0, max_bytes = 0;  // 0, 0: unknown (a profile that does not say)
  bool known() const { return max_bytes > 0; }
  bool operator==(const MeasuredRange&) const = default;
};

struct ProfileResults {
  std::vector<std::uint64_t> sizes;     // ascending
  std::vector<double> baseline, tuned;  // busbw GB/s per size; tuned: the env alone
  double speedup_geomean = 1, worst_size_ratio = 1;
  // The env and nccltune's tuner plugin with this profile (its per_size choices), measured against
  // the defaults in fresh workers; empty when not confirmed (no per_size, or no plugin).
  std::vector<double> with_plugin;
  double with_plugin_speedup_geomean = 1;
  // The hardware peak of the tuned collective on this shape (topology/peak_model.h), GB/s, and
  // its bottleneck ("NVLink4 x18"); when unknown, no number and the bottleneck says why.
  std::optional<double> peak_busbw_gbps;
  std::string peak_bottleneck;
  bool operator==(const ProfileResults&) const = default;
};

// The busbw the profile gives at size i (tuned; the defaults' where it keeps them) as a percentage
// of results.peak_busbw_gbps; nullopt when the peak or that value is unknown.
std::optional<double> percent_of_peak(const ProfileResults& results, std::size_t i);

struct ProfileProvenance {
  std::string tool, date;
  // Env trials (runs of fresh workers), the NCCL_ALGO x NCCL_PROTO pairs measured in a
  // communicator by pair-mode trials, and the failed configs (the entries of Profile::failed;
  // tunes before these counts wrote every measurement in `trials` and every failed run or pair in
  // `failed_trials`). search/trial_counts.h says what each is.
  int trials = 0, pairs = 0, failed_trials = 0;
  double duration_s = 0;
  std::string objective;  // balanced, bandwidth, latency (or empty)
  int hosts = 0;
  double noise_floor = 0;
  std::string confirmation;  // e.g. "A/B 4 rounds: +17.9% (noise 1.2%)"
  // The same for env + the tuner plugin with this profile, and the per_size ranges it dropped.
  std::string plugin_confirmation;
  NcclObserved nccl_observed;  // what NCCL's own log said during the tune; empty when not captured
  bool operator==(const ProfileProvenance&) const = default;
};

struct FailedTrial {
  Env env;
  TrialOutcome outcome = TrialOutcome::crash;
  std::string reason;
  bool operator==(const FailedTrial&) const = default;
};

// What the confirmation through nccltune's tuner plugin found for one collective's per_size
// choices: the plugin served them and they held (confirmed), it did not serve them (not_served:
// `why` holds its reason) or they were slower than the defaults under it (slower); none when not
// confirmed (no per_size, no plugin). `why` also names the ranges withheld.
enum class PluginStatus { none, confirmed, not_served, slower };
std::string_view to_string(PluginStatus status);            // "none", "confirmed", "not_served", "slower"
std::string_view plugin_status_words(PluginStatus status);  // for people: "not served", ...
struct PluginVerdict {
  PluginStatus status = PluginStatus::none;
  std::string why;
  bool operator==(const PluginVerdict&) const = default;
};

// What the tune measured of one collective.
struct CollectiveProfile {
  bool guard = false;      // measured against the defaults only (tune --guard), never tuned
  MeasuredRange measured;  // unknown in profiles written before it was recorded
  std::vector<SizeChoice> per_size;
  // Where per_size changes its choice between two measured sizes, ascending; written only when
  // not empty (profiles before it have none).
  std::vector<SizeSwitch> switches;
  ProfileResults results;
  PluginVerdict plugin;  // written as `plugin: {status, why}` when not none
  bool operator==(const CollectiveProfile&) const = default;
};

// One measured communicator shape: `nodes` nodes of `ranks_per_node` ranks each, and what the tune
// measured of each collective on it (as a v2 profile's `collectives`). A rail has ranks_per_node
// 1, a node has nodes 1; neither is larger than the profile's shape.
struct CommunicatorSection {
  int nodes = 1, ranks_per_node = 1;
  CommRole role = CommRole::world;
  std::map<std::string, CollectiveProfile> collectives;
  bool operator==(const CommunicatorSection&) const = default;
};

// "rail: 2 nodes x 1 rank" (comm_shape.h's describe_shape of the section's shape); in an MNNVL
// profile (`mnnvl`) "world: 1 NVLink domain x 16 ranks".
std::string describe_section(const CommunicatorSection& section, bool mnnvl = false);

// A setting that won on one communicator shape and lost on another, so it is not in env; `why`
// says where it lost ("rail (2 nodes x 1): all_reduce -20% at 1M"). env is never empty.
struct WithheldSetting {
  Env env;
  std::string why;
  bool operator==(const WithheldSetting&) const = default;
};

struct Profile {
  ProfileShape shape;
  std::map<std::string, std::string> env;
  bool keep_defaults = false;  // nothing beat NCCL's defaults beyond noise; env is then empty
  // The world communicator's (all shape.ranks ranks), by nccl-tests name (is_collective_name);
  // a v1 file reads as its one all_reduce, a v3 file as its `role: world` section's.
  std::map<std::string, CollectiveProfile> collectives;
  // The other communicator shapes measured (rail, node; never the world, whose collectives are
  // above), in the file's order, and the settings withheld from env. Either not empty: written as
  // v3; both empty: v2.
  std::vector<CommunicatorSection> shapes;
  std::vector<WithheldSetting> withheld;
  ProfileProvenance provenance;
  std::vector<FailedTrial> failed;
  // Why the profile is the way it is where that is not obvious: a restriction kept in per_size
  // (for the tuner plugin) rather than in env, say. One line each.
  std::vector<std::string> notes;
  bool operator==(const Profile&) const = default;

  const CollectiveProfile* collective(std::string_view name) const;  // nullptr when not measured
  // all_reduce alone (every v1 profile): renderers keep its sections' plain names.
  bool only_all_reduce() const;
};

// Deterministic YAML; every section is written. nccltune/profile/v2 when shapes and withheld are
// empty (byte for byte what it wrote before v3), else v3, with the world's section first in
// `communicators` and then `shapes` in order. Doubles are written in their shortest exact form
// (NaN and infinities as .nan, .inf, -.inf). Free text (gpu, nic, reason, ...) is written with
// control characters and invalid UTF-8 replaced by spaces / '?' and cut at kMaxFreeText bytes,
// so that whatever the tuner saw, the file parses.
std::string profile_to_yaml(const Profile& profile);

// Required: schema, shape (with key and nodes), env. Everything else is optional and defaults as
// in the structs above, except that shape.ranks is always nodes x gpus_per_node: the one of the two
// left out follows from the other. shape.hosts (default nodes) is a multiple of nodes that divides
// ranks, and differs from nodes only with shape.mnnvl: true. keep_defaults: true with a non-empty env is an error.
// v3 requires `communicators` (and has no top-level `collectives`): each entry's nodes,
// ranks_per_node and role are required; exactly one is `role: world`, of shape.nodes nodes of
// shape.gpus_per_node ranks; (nodes, ranks_per_node) appear once; nodes is 1..shape.nodes and
// ranks_per_node 1..shape.gpus_per_node; a rail has ranks_per_node 1, a node has nodes 1.
// `withheld` entries need a non-empty env (checked as env is) and why.
//
// ProfileParts::for_jobs reads only what a job's environment needs (schema, shape, keep_defaults,
// env, withheld, and each section's collectives' measured range, per-size choices, guard flag and
// plugin verdict): the lines of provenance, failed, notes and each collective's results (a v1
// profile's at the top level; a v3 profile's at the indentation profile_to_yaml gives them under
// `communicators`, 8 spaces; in another layout they are read) are blanked before parsing, so they
// cost no YAML parse (they are most of a profile tune writes: its curves and NCCL's account).
// Line numbers stay those of the file, the whole file is still checked for size, NUL and UTF-8,
// and a second document still fails. A section is skipped only when profile_skim_check.h proves
// the whole parse would read it (the layout profile_to_yaml writes, and the same rules); anything
// else (a torn file, a broken or hand-laid-out section) is parsed whole, and a text the skimmed
// parse refuses is parsed whole too: for_jobs refuses exactly the profiles the whole parse refuses.
enum class ProfileParts { whole, for_jobs };
Result<Profile> parse_profile(std::string_view text, std::string_view origin,
                              ProfileParts parts = ProfileParts::whole);
Result<Profile> read_profile(const std::filesystem::path& file);

// The text parse_profile reads for ProfileParts::for_jobs: the same lines, those of the sections
// jobs do not need made empty; nullopt when a skipped section is not proven whole and valid
// (profile_skim_check.h), appears twice, names a skipped key in another spelling, or holds '&',
// '*' or '!' (a YAML anchor, alias or tag the strict reader refuses, or text that looks like one):
// such a profile is parsed whole.
std::optional<std::string> profile_text_for_jobs(std::string_view text);

// The store's path of a profile: <out_dir>/<shape.node_type_key>/<profile_file_name(shape)>:
// <nodes>n.yaml, or <nodes>n<hosts>h.yaml for an MNNVL profile (1n4h.yaml: one NVLink domain on 4
// hosts), so that profiles of one and of two domains on the same hosts are stored apart.
std::string profile_file_name(const ProfileShape& shape);
std::filesystem::path profile_path(const std::filesystem::path& out_dir, const ProfileShape& shape);
// Writes profile_to_yaml to profile_path atomically (temp file, fsync, rename), mode 0644, creating
// the directories (make_store_directories). Refuses a profile that would not parse back.
Status write_profile(const std::filesystem::path& out_dir, const Profile& profile,
                     std::filesystem::path* written = nullptr);

// Creates the directories of `directory` that are missing, each mode 0755 whatever the umask
// (`env` refuses a store that group or others may write); existing ones are left as they are.
Status make_store_directories(const std::filesystem::path& directory);

}  // namespace nccltune
