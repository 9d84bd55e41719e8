#include "cost_table_choice.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace nccltune {
namespace {

// NCCL 2.28's ncclAlgoStr / ncclProtoStr, in table order (nccl_tuner_common.h).
constexpr std::array<std::string_view, nccl_abi::kNumAlgorithms> kAlgorithmNames = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, nccl_abi::kNumProtocols> kProtocolNames = {"LL", "LL128", "Simple"};

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

template <std::size_t N>
std::optional<int> index_of(std::string_view name, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (same_name(name, names[i])) return static_cast<int>(i);
  return std::nullopt;
}

template <std::size_t N>
std::string_view name_at(int index, const std::array<std::string_view, N>& names) {
  return index >= 0 && static_cast<std::size_t>(index) < N ? names[static_cast<std::size_t>(index)] : "?";
}

}  // namespace

std::optional<int> nccl_algorithm_index(std::string_view name) {
  return index_of(name, kAlgorithmNames);
}
std::optional<int> nccl_protocol_index(std::string_view name) {
  return index_of(name, kProtocolNames);
}
std::string_view nccl_algorithm_name(int index) {
  return name_at(index, kAlgorithmNames);
}
std::string_view nccl_protocol_name(int index) {
  return name_at(index, kProtocolNames);
}

CostTableChoice choose_cost_table_cell(const std::vector<SizeChoice>& per_size,
                                       nccl_abi::ncclFunc_t collective, std::uint64_t bytes,
                                       const CostTable& table) {
  CostTableChoice choice;
  if (collective != nccl_abi::ncclFuncAllReduce) {
    choice.outcome = ChoiceOutcome::other_collective;
    return choice;
  }
  const auto range = std::find_if(per_size.begin(), per_size.end(), [&](const SizeChoice& candidate) {
    return candidate.min_bytes <= bytes && bytes <= candidate.max_bytes;
  });
  if (range == per_size.end()) {
    choice.outcome = ChoiceOutcome::no_range;
    return choice;
  }
  choice.range = static_cast<std::size_t>(range - per_size.begin());
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
