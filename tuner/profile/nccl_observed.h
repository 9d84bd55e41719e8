// What NCCL said it did while `tune` measured (a profile's provenance.nccl_observed): the network
// it used, GPUDirect RDMA per connection, NVLS, channels and its own (algorithm, protocol) at each
// size, under NCCL's defaults and under the env the profile ships; explain's verdicts on it; and
// the sizes where NCCL's own choice under the shipped env is not the fastest one measured.
//
// Facts NCCL's log did not show are left out (nullopt, empty), never guessed. The YAML is read as
// strictly as the rest of the profile: unknown keys, wrong types and long lists are errors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}

namespace nccltune {

struct SizeChoice;
struct MeasuredRange;

// One TUNING line: NCCL's choice for one collective call at one size.
struct ObservedChoice {
  std::string op;  // "AllReduce"; empty when the NCCL version does not say (before 2.23)
  std::uint64_t bytes = 0;
  std::string algo, proto;  // as NCCL prints them: "RING", "NVLS_TREE"; "LL128", "SIMPLE"
  bool operator==(const ObservedChoice&) const = default;
};

// What one set of trials under one env showed.
struct NcclObservation {
  std::string nccl_version;            // "2.28.9"
  std::string transport;               // IB, RoCE, Socket, OFI, plugin (nccl-log/v1's names)
  std::string net_plugin;              // "IB", "Socket", "AWS Libfabric", ...
  std::vector<std::string> hcas;       // the network devices NCCL used: "mlx5_0:1", "eth0"
  std::optional<int> connections;      // network connections its log shows
  std::optional<int> gdr_connections;  // those with GPUDirect RDMA (/GDRDMA)
  std::optional<bool> nvls_available;
  std::optional<int> nvls_channels, coll_channels;
  std::string tuner;                    // the tuner plugin NCCL loaded, "internal" when it says it uses
                                        // its own; empty when its log does not say
  std::vector<ObservedChoice> choices;  // sorted by op, bytes
  bool operator==(const NcclObservation&) const = default;
};

struct ObservedVerdict {
  std::string level;  // "info", "warn", "fail"
  std::string check;  // "transport", "gdr", "hcas", ...
  std::string message;
  bool operator==(const ObservedVerdict&) const = default;
};

// A measured size where NCCL, left to itself under the shipped env, chooses another (algorithm,
// protocol) than the fastest measured there: only per_size (the tuner plugin) gets that one.
struct ChoiceContradiction {
  std::string op;
  std::uint64_t bytes = 0;
  std::string nccl;      // "RING/LL128"
  std::string measured;  // "Tree/LL"
  bool operator==(const ChoiceContradiction&) const = default;
};

// One enabled (algorithm, protocol) pair of NCCL's init tuning table (collectives/
// nccl_info_tuning_table.h) for one collective: its model's latency and the busbw it predicts
// where latency does not count (algbw x nccl-tests' busbw factor, its model's asymptote).
struct ModelPair {
  std::string algo, proto;      // as the TUNING lines spell them: "RING", "NVLS_TREE"; "SIMPLE"
  double latency_us = 0;        // rounded to 0.1 us, as NCCL prints it
  std::optional<double> busbw;  // GB/s, rounded to 0.01; nullopt when the table's ranks were unknown
  bool operator==(const ModelPair&) const = default;
};

// What NCCL said on one split communicator a tune measured beside the world (profile/comm_shape.h:
// "rail", "node"): each communicator's account stays its own, since NCCL's facts differ by shape
// (a rail of one GPU per node has no NVLS; a node crosses no network). Its choices are left out:
// the calls' TUNING lines name no communicator, and the world's account holds them.
struct CommObserved {
  std::string comm;                         // "rail", "node"
  std::optional<NcclObservation> defaults;  // as NcclObserved's
  std::optional<NcclObservation> shipped;
  std::vector<ObservedVerdict> verdicts;  // explain's, judged by what NCCL can do on this shape
  bool operator==(const CommObserved&) const = default;
};

struct NcclObserved {
  // The world's account: what jobs get, and the daemon's metrics export.
  std::optional<NcclObservation> defaults;  // the probe, the baseline and the defaults' confirmation
  std::optional<NcclObservation> shipped;   // the winner's confirmation; absent when env is empty
  std::vector<ObservedVerdict> verdicts;    // explain's, on the shipped env's log (else the defaults')
  std::vector<ChoiceContradiction> contradictions;
  // NCCL's own model of each tuned collective (nccl-tests name): the enabled pairs of the first
  // tuning table its log showed under the defaults, in the printed order.
  std::map<std::string, std::vector<ModelPair>> nccl_model;
  // The split communicators' accounts, in the worker's order (rail, node); empty for a tune of the
  // world alone and in profiles written before they were kept apart.
  std::vector<CommObserved> comms;
  bool empty() const { return !defaults && !shipped; }
  bool operator==(const NcclObserved&) const = default;
};

// The most choices, verdicts and contradictions a profile holds of each.
inline constexpr std::size_t kMaxObservedEntries = 512;
// The most pairs nccl_model holds per collective (7 algorithms x 3 protocols in NCCL 2.23+).
inline constexpr std::size_t kMaxModelPairs = 64;

// The pair of `model` NCCL names "RING/SIMPLE" (as observed_choice_at gives it; names compare as
// NCCL reads them); nullptr when the model has none.
const ModelPair* model_pair_for(const std::vector<ModelPair>& model, std::string_view choice);

// The observation jobs get: the shipped env's, else the defaults'; null when neither was seen.
const NcclObservation* jobs_observation(const NcclObserved& observed);

// NCCL's choice for `op` at `bytes` ("RING/LL128"), or "" when the log did not show one.
// An op-less choice (an NCCL before 2.23) counts for any op.
std::string observed_choice_at(const NcclObservation& observation, std::string_view op, std::uint64_t bytes);

// The sizes of `observation.choices` for `op`, inside `measured`, where a per_size range says
// otherwise. Names compare as NCCL reads them (case and '_' ignored: "CollnetDirect" is
// COLLNET_DIRECT); a range's empty algo or proto agrees with anything.
std::vector<ChoiceContradiction> choice_contradictions(const NcclObservation& observation,
                                                       std::string_view op,
                                                       const std::vector<SizeChoice>& per_size,
                                                       const MeasuredRange& measured);

// "at 1M NCCL chose RING/LL128 under the shipped env; Tree/LL measured fastest (per_size, the tuner
// plugin's)".
std::string describe_contradiction(const ChoiceContradiction& contradiction);

// One line of the facts: "IB (plugin IB), 8 HCAs (mlx5_0:1, ...), GPUDirect RDMA on 16 of 16
// connections, NVLS 16 channels, 32 channels, tuner: internal"; what is unknown is left out.
std::string describe_observation(const NcclObservation& observation);

// What show and tune print of it: the facts under the defaults and (when it differs) the shipped
// env, the warn and fail verdicts, and the contradictions; then each split communicator's facts and
// its warn and fail verdicts, named by its role; "" when nothing was observed.
std::string render_nccl_observed_lines(const NcclObserved& observed);

// Writes `observed` as the block under "provenance:" ("  nccl_observed:" and what it holds).
void write_nccl_observed(std::ostream& out, const NcclObserved& observed);
// Reads it; throws YamlFieldError as the other profile field readers do (base/strict_yaml.h).
NcclObserved parse_nccl_observed(const YAML::Node& node, const std::string& field);

}  // namespace nccltune
