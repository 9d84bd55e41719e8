#include "plugin/cost_table_choice.h"

#include "base/collective_names.h"
#include "profile/nccl_names.h"
#include "profile/size_ranges.h"

namespace nccltune {

static_assert(kNcclAlgorithms.size() == nccl_abi::kNumAlgorithms &&
                  kNcclProtocols.size() == nccl_abi::kNumProtocols,
              "NCCL's names and its cost table's shape agree");

// The table lists NCCL's functions in ncclFunc_t's order, so a function is its row.
static_assert(kCollectiveTable[nccl_abi::ncclFuncBroadcast].function == "broadcast" &&
                  kCollectiveTable[nccl_abi::ncclFuncReduce].function == "reduce" &&
                  kCollectiveTable[nccl_abi::ncclFuncAllGather].function == "allgather" &&
                  kCollectiveTable[nccl_abi::ncclFuncReduceScatter].function == "reducescatter" &&
                  kCollectiveTable[nccl_abi::ncclFuncAllReduce].function == "allreduce",
              "base/collective_names.h lists NCCL's functions in ncclFunc_t's order");

std::string_view collective_name(nccl_abi::ncclFunc_t collective) {
  if (collective < nccl_abi::ncclFuncBroadcast || collective > nccl_abi::ncclFuncAllReduce) return "";
  return kCollectiveTable[static_cast<std::size_t>(collective)].name;
}

const std::vector<SizeChoice>* per_size_for(const Profile& profile, nccl_abi::ncclFunc_t collective) {
  const std::string_view name = collective_name(collective);
  if (name.empty()) return nullptr;
  const CollectiveProfile* tuned = profile.collective(name);
  return tuned && !tuned->guard ? &tuned->per_size : nullptr;
}

ResolvedRanges resolve_ranges(const std::vector<SizeChoice>* per_size, const CostTableIndices& indices) {
  ResolvedRanges resolved;
  resolved.per_size = per_size;
  if (per_size == nullptr) return resolved;
  resolved.cells.reserve(per_size->size());
  for (const SizeChoice& range : *per_size)
    resolved.cells.push_back(RangeCell{indices.algorithm(range.algo), indices.protocol(range.proto)});
  return resolved;
}

CostTableChoice choose_cost_table_cell(const ResolvedRanges& ranges, std::uint64_t bytes,
                                       const CostTable& table) {
  CostTableChoice choice;
  const std::vector<SizeChoice>* per_size = ranges.per_size;
  if (per_size == nullptr) {
    choice.outcome = ChoiceOutcome::other_collective;
    return choice;
  }
  const SizeChoice* range = choice_for_size(*per_size, bytes);
  if (range == nullptr) {
    choice.outcome = ChoiceOutcome::no_range;
    return choice;
  }
  choice.range = static_cast<std::size_t>(range - per_size->data());
  if (range->algo.empty() && range->proto.empty()) {
    choice.outcome = range->channels > 0 ? ChoiceOutcome::channels_only : ChoiceOutcome::left_to_nccl;
    choice.channels = range->channels;
    return choice;
  }
  // NCCL takes an algorithm only together with a protocol; a list means "NCCL picks among these".
  const RangeCell& cell = ranges.cells[*choice.range];
  const std::optional<int> algorithm = cell.algorithm;
  const std::optional<int> protocol = cell.protocol;
  if (!algorithm || !protocol) {
    choice.outcome = ChoiceOutcome::left_to_nccl;
    return choice;
  }
  choice.algorithm = *algorithm;
  choice.protocol = *protocol;
  if (table.cells == nullptr || *algorithm >= table.num_algorithms || *protocol >= table.num_protocols) {
    choice.outcome = ChoiceOutcome::outside_table;
    return choice;
  }
  // NCCL_ALGO_PROTO_IGNORE, or any negative cost, is a cell NCCL will not run for this call
  // (not built, not supported at this size or for this type): forcing it would fail the collective.
  if (!(table.at(*algorithm, *protocol) >= 0.0f)) {
    choice.outcome = ChoiceOutcome::unavailable;
    return choice;
  }
  choice.outcome = ChoiceOutcome::marked;
  choice.channels = range->channels;
  return choice;
}

std::optional<std::uint64_t> measured_chunk_bytes(const ResolvedRanges& ranges, std::uint64_t bytes,
                                                  int algorithm, int protocol) {
  if (ranges.per_size == nullptr) return std::nullopt;
  const SizeChoice* range = choice_for_size(*ranges.per_size, bytes);
  if (range == nullptr || range->chunk_bytes == 0) return std::nullopt;
  // A chunk size holds for the pair it was measured with; under another pair it means nothing.
  const RangeCell& cell = ranges.cells[static_cast<std::size_t>(range - ranges.per_size->data())];
  if (cell.algorithm != algorithm || cell.protocol != protocol) return std::nullopt;
  return range->chunk_bytes;
}

}  // namespace nccltune
