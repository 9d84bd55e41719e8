// nccl.h's ncclConfig_t as NCCL 2.28.9 lays it out (ncclConfig_v22800), for what the fake reads of
// a config: the product declares the type opaque (collectives/nccl_declarations.h), since it only
// passes NULL, while a job such as fake_train names its communicators through it.
#pragma once

#include <climits>
#include <cstddef>
#include <optional>
#include <string>

namespace nccltune::fake {

// NOLINTBEGIN: NCCL's names
struct NcclConfig {
  std::size_t size = sizeof(NcclConfig);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 22809;
  int blocking = kUndefInt;
  int cgaClusterSize = kUndefInt;
  int minCTAs = kUndefInt;
  int maxCTAs = kUndefInt;
  const char* netName = nullptr;
  int splitShare = kUndefInt;
  int trafficClass = kUndefInt;
  const char* commName = nullptr;
  int collnetEnable = kUndefInt;
  int CTAPolicy = kUndefInt;
  int shrinkShare = kUndefInt;
  int nvlsCTAs = kUndefInt;
  int nChannelsPerNetPeer = kUndefInt;
  int nvlinkCentricSched = kUndefInt;

  static constexpr int kUndefInt = INT_MIN;  // NCCL_CONFIG_UNDEF_INT (INT_MIN)
};
// NOLINTEND

// The commName of a config as parseCommConfig reads it (src/init.cc): the caller's bytes up to
// its `size`, "" when it names none; nullopt when its magic says NCCL_CONFIG_INITIALIZER did not
// make it (NCCL then fails the call with ncclInvalidArgument).
std::optional<std::string> config_comm_name(const void* config);

}  // namespace nccltune::fake
