// The algorithm and protocol NCCL ran, as observe compares them with a profile's choice. NCCL's
// profiler hands Inspector ncclAlgoToString/ncclProtoToString (src/collectives.cc: "RING",
// "NVLS_TREE", "COLLNET_DIRECT"; "LL", "LL128", "SIMPLE"), and Inspector's Prometheus textfile
// joins them with '_' (algo_proto="RING_LL128", inspector_prom.cc); its README's example writes
// "Ring_ll". A profile spells them as NCCL's ncclAlgoStr/ncclProtoStr (src/init.cc: "Ring",
// "NVLSTree", "CollNetDirect"; "LL", "LL128", "Simple"), the way NCCL_ALGO and NCCL_PROTO take
// them. Observe writes them the profile's way, "Ring/LL128".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nccltune {

// "RING_LL128", "Ring_ll", "nvls_tree_simple" or "Ring/LL128" as "Ring/LL128"; nullopt for an
// algorithm or protocol NCCL does not have (Inspector's "unknown", a name from a newer NCCL).
std::optional<std::string> normalize_algo_proto(std::string_view text);

// Whether `ran` ("Ring/LL128") is what `tuned` ("Ring/LL128", "any/LL128", "Ring/any") asks for.
bool algo_proto_matches(std::string_view ran, std::string_view tuned);

}  // namespace nccltune
