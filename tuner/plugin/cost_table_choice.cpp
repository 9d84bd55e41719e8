#include "plugin/cost_table_choice.h"

#include "profile/nccl_names.h"
#include "profile/size_ranges.h"

namespace nccltune {

static_assert(kNcclAlgorithms.size() == nccl_abi::kNumAlgorithms &&
                  kNcclProtocols.size() == nccl_abi::kNumProtocols,
              "NCCL's names and its cost table's shape agree");

CostTableChoice choose_cost_table_cell(const std::vector<SizeChoice>& per_size,
                                       nccl_abi::ncclFunc_t collective, std::uint64_t bytes,
                                       const CostTable& table) {
  CostTableChoice choice;
  if (collective != nccl_abi::ncclFuncAllReduce) {
    choice.outcome = ChoiceOutcome::other_collective;
    return choice;
  }
  const SizeChoice* range = choice_for_size(per_size, bytes);
  if (range == nullptr) {
    choice.outcome = ChoiceOutcome::no_range;
    return choice;
  }
  choice.range = static_cast<std::size_t>(range - per_size.data());
  if (range->algo.empty() && range->proto.empty()) {
    choice.outcome = range->channels > 0 ? ChoiceOutcome::channels_only : ChoiceOutcome::left_to_nccl;
    choice.channels = range->channels;
    return choice;
  }
  // NCCL takes an algorithm only together with a protocol; a list means "NCCL picks among these".
  const std::optional<int> algorithm = nccl_algorithm_index(range->algo);
  const std::optional<int> protocol = nccl_protocol_index(range->proto);
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

}  // namespace nccltune
