// The NCCL_* environment as the fake NCCL reads it: a snapshot taken once at communicator init,
// values compared the way NCCL reads them (algorithm and protocol names case-insensitive,
// NCCL_NET_GDR_LEVEL and NCCL_P2P_LEVEL path names case-sensitive, 0-5 as LOC, PIX, PXB, PHB,
// SYS, SYS), NCCL_ALGO / NCCL_PROTO lists with "^" exclusions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_model.h"

namespace nccltune::fake {

using NcclEnv = std::map<std::string, std::string>;  // set, non-empty NCCL_* variables

// The NCCL_* entries of `environment` (an environ-style array, nullptr-terminated).
NcclEnv read_nccl_env(const char* const* environment);

// `value` of `variable` in the form used to compare it.
std::string normalized_value(std::string_view variable, std::string_view value);

// Whether every variable of `condition` has one of its values in `env`.
bool holds(const Condition& condition, const NcclEnv& env);

// An NCCL_ALGO / NCCL_PROTO value: "Ring,Tree" allows those, "^Tree" allows all but those.
struct NameFilter {
  bool exclude = false;
  std::vector<std::string> names;  // lower-case

  bool allows(std::string_view name) const;
};

// The first NCCL whose parseList reads function prefixes ("allreduce:ring;allgather:tree").
inline constexpr int kFirstScopedListVersion = 22403;

// The filter `variable` sets for collective `op` (nccl-tests name), or nullopt when it sets none.
// A scoped value ("Ring;allgather:Tree", NCCL 2.24.3) gives `op` its own entry, else the entry
// without a function, else nothing (NCCL's own choice). Before 2.24.3 (`nccl_version`) parseList
// splits the value at commas only: "allreduce:ring;allgather:tree" is one name that matches none
// (FIDELITY.md F38).
std::optional<NameFilter> name_filter(const NcclEnv& env, std::string_view variable,
                                      std::string_view op = "all_reduce",
                                      int nccl_version = kDefaultNcclVersion);

// `variable` as NCCL reads an integer parameter (strtoll base 0, trailing characters ignored, no
// digits 0), or nullopt when it is unset or out of range.
std::optional<long> integer_variable(const NcclEnv& env, std::string_view variable);

}  // namespace nccltune::fake
