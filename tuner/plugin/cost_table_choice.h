// The tuner plugin's decision for one collective call, as a pure function: given the profile's
// measured best (algo, proto, channels) per size range and the cost table NCCL filled, which cell
// to mark as the cheapest and how many channels to ask for. No NCCL, no files: unit tests call it
// directly, the plugin's core (tuner_core.cpp) applies what it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "plugin/nccl_tuner_common.h"
#include "profile/nccl_names.h"  // nccl_algorithm_index, kNcclAlgorithms
#include "profile/profile.h"

namespace nccltune {

// The cost table of one getCollInfo call: num_algorithms rows of num_protocols floats, one
// contiguous block (NCCL casts its float[algorithms][protocols] array to float**).
struct CostTable {
  const float* cells = nullptr;
  int num_algorithms = 0, num_protocols = 0;
  float at(int algorithm, int protocol) const { return cells[algorithm * num_protocols + protocol]; }
};

enum class ChoiceOutcome {
  marked,            // mark (algorithm, protocol) cheapest; channels when > 0
  channels_only,     // the range leaves algo and proto to NCCL but measured a channel count
  other_collective,  // a collective the profile did not tune: NCCL decides
  no_range,          // no per_size range holds this size
  left_to_nccl,      // the range's algo or proto is empty or a list: NCCL picks among them
  outside_table,     // a name this NCCL's table has no row / column for (numAlgo, numProto)
  unavailable,       // NCCL marked the cell NCCL_ALGO_PROTO_IGNORE for this call: never forced
};

struct CostTableChoice {
  ChoiceOutcome outcome = ChoiceOutcome::no_range;
  int algorithm = -1, protocol = -1;  // the range's cell, when both names are known
  int channels = 0;                   // for NCCL's nChannels; 0 = NCCL's own choice
  std::optional<std::size_t> range;   // index into per_size of the range that holds the size
};

// Which row and column of one tuner ABI's cost table a profile's algorithm and protocol name has
// (nullopt: none, or not a single name). Each ABI adapter (tuner_v4.cpp ... tuner_v7.cpp) hands
// its own to init, which resolves every range once (resolve_ranges), never per call.
struct CostTableIndices {
  std::optional<int> (*algorithm)(std::string_view name) = nullptr;
  std::optional<int> (*protocol)(std::string_view name) = nullptr;
};

// One range's (algo, proto) as a cell of the ABI's cost table; each nullopt when its name is
// empty, a list, or a name the ABI has no row or column for.
struct RangeCell {
  std::optional<int> algorithm, protocol;
};

// One collective's per_size ranges and their cells, one per range (same order).
struct ResolvedRanges {
  const std::vector<SizeChoice>* per_size = nullptr;  // nullptr: a collective the profile did not tune
  std::vector<RangeCell> cells;
};

// NCCL's collective by its nccl-tests name ("all_gather"); "" for send/recv and the others no
// profile tunes.
std::string_view collective_name(nccl_abi::ncclFunc_t collective);

// The per_size ranges the profile has for NCCL's `collective`: those of the tuned (not guard)
// collective of that name; nullptr when it has none (send/recv, alltoall, an untuned collective).
const std::vector<SizeChoice>* per_size_for(const Profile& profile, nccl_abi::ncclFunc_t collective);

// per_size (per_size_for; may be nullptr) with each range's names looked up in `indices`.
ResolvedRanges resolve_ranges(const std::vector<SizeChoice>* per_size, const CostTableIndices& indices);

// ranges.per_size: one collective's ranges, ascending and disjoint, as parse_profile guarantees;
// nullptr: other_collective.
CostTableChoice choose_cost_table_cell(const ResolvedRanges& ranges, std::uint64_t bytes, const CostTable& table);

// getChunkSize (tuner API v6): the chunk size the range holding `bytes` measured, when it was
// measured with the (algorithm, protocol) NCCL is about to run; nullopt: NCCL's own chunk size.
std::optional<std::uint64_t> measured_chunk_bytes(const ResolvedRanges& ranges, std::uint64_t bytes,
                                                  int algorithm, int protocol);

}  // namespace nccltune
