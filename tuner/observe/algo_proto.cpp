#include "observe/algo_proto.h"

#include <array>
#include <cctype>

namespace nccltune {

namespace {

// NCCL's ncclAlgoStr and ncclProtoStr (src/init.cc at v2.28.9-1 and v2.30.7-1).
constexpr std::array<std::string_view, 7> kNcclAlgorithms = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, 3> kNcclProtocols = {"LL", "LL128", "Simple"};

// Upper case without '_': ncclAlgoToString's "COLLNET_DIRECT" and ncclAlgoStr's "CollNetDirect"
// meet at "COLLNETDIRECT".
std::string folded(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '_') out += char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

template <std::size_t N>
std::optional<std::string_view> nccl_name(std::string_view text,
                                          const std::array<std::string_view, N>& names) {
  const std::string key = folded(text);
  for (std::string_view name : names)
    if (folded(name) == key) return name;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> normalize_algo_proto(std::string_view text) {
  // The protocol is the last part: the algorithm may hold '_' itself ("NVLS_TREE_SIMPLE").
  std::size_t split = text.rfind('/');
  if (split == std::string_view::npos) split = text.rfind('_');
  if (split == std::string_view::npos) return std::nullopt;
  const auto algo = nccl_name(text.substr(0, split), kNcclAlgorithms);
  const auto proto = nccl_name(text.substr(split + 1), kNcclProtocols);
  if (!algo || !proto) return std::nullopt;
  return std::string(*algo) + "/" + std::string(*proto);
}

bool algo_proto_matches(std::string_view ran, std::string_view tuned) {
  const std::size_t ran_split = ran.find('/'), tuned_split = tuned.find('/');
  if (ran_split == std::string_view::npos || tuned_split == std::string_view::npos) return ran == tuned;
  const auto part_matches = [](std::string_view observed, std::string_view wanted) {
    return wanted == "any" || folded(observed) == folded(wanted);
  };
  return part_matches(ran.substr(0, ran_split), tuned.substr(0, tuned_split)) &&
         part_matches(ran.substr(ran_split + 1), tuned.substr(tuned_split + 1));
}

}  // namespace nccltune
