// The collectives nccltune knows, in one table that every list of them reads: by their
// nccl-tests names (all_reduce_perf measures all_reduce), with NCCL's function name in a scoped
// env value ("allgather:Ring") and in its log, and whether tune measures them. In base, the floor
// below topology (the peak model), collectives, the profile and the search alike.
#pragma once

#include <array>
#include <string_view>

namespace nccltune {

struct CollectiveName {
  std::string_view name;      // nccl-tests': "all_reduce"
  std::string_view function;  // NCCL's function in a scoped env value: "allreduce"; "" for none
  std::string_view log;       // NCCL's function in its log: "AllReduce"; "" for none
  bool tuned = false;         // tune measures it (--collectives)
};

// In NCCL's order of its functions (ncclFuncBroadcast first), then alltoall, which NCCL builds
// of sends and receives: it has no function of its own, so NCCL_ALGO and NCCL_PROTO never name it.
inline constexpr std::array<CollectiveName, 6> kCollectiveTable = {{
    {"broadcast", "broadcast", "Broadcast", false},
    {"reduce", "reduce", "Reduce", false},
    {"all_gather", "allgather", "AllGather", true},
    {"reduce_scatter", "reducescatter", "ReduceScatter", true},
    {"all_reduce", "allreduce", "AllReduce", true},
    {"alltoall", "", "", true},
}};

// The row of `name` (nccl-tests' name); nullptr for none. Not `find_collective`: that is
// collectives/collective_spec.h's (the spec), and two functions of one name and parameters are one
// symbol to the linker, whatever they return.
constexpr const CollectiveName* find_collective_name(std::string_view name) {
  for (const CollectiveName& row : kCollectiveTable)
    if (row.name == name) return &row;
  return nullptr;
}

constexpr bool is_known_collective(std::string_view name) { return find_collective_name(name) != nullptr; }

}  // namespace nccltune
