// The table of NCCL_ variable names NCCL reads, by minor release (nccl_env_names.cpp says how
// it was derived). nccl_names.h's is_known_nccl_variable is what reads it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace nccltune {

struct NcclEnvName {
  std::string_view name;
  std::uint16_t minors;  // bit i: NCCL 2.(kNcclEnvNamesOldestMinor + i) reads it
};
inline constexpr int kNcclEnvNamesOldestMinor = 18;
inline constexpr int kNcclEnvNamesNewestMinor = 30;
extern const std::array<NcclEnvName, 261> kNcclEnvNames;  // sorted by name

}  // namespace nccltune
