// The pair control of libnccl-tuner-nccltune.so: how a worker in pair mode makes nccltune's tuner
// plugin force one algorithm/protocol pair on every collective of its communicator, so that one
// communicator measures several pairs (docs/ARCHITECTURE.md, "Pair mode"). The plugin exports one
// instance under kPairControlSymbol. The worker names the plugin by its path in NCCL_TUNER_PLUGIN
// and dlopens that same path: the loader hands both of them one copy of the library, so the
// worker writes what NCCL's plugin reads. A block in memory, not the environment: NCCL reads its
// environment once, and the pair changes between sweeps of one communicator.
//
// NCCL calls getCollInfo on the thread that enqueues the collective (the worker's), so the block
// is written and read on one thread and needs no lock.
#pragma once

#include <cstdint>

namespace nccltune {

inline constexpr const char* kPairControlSymbol = "nccltunePairControl_v1";
inline constexpr std::uint32_t kPairControlVersion = 1;

extern "C" {
struct NcclTunePairControl {
  std::uint32_t version;   // kPairControlVersion
  std::int32_t active;     // 0: the plugin serves its profile; 1: it forces (algorithm, protocol)
  std::int32_t algorithm;  // NCCL's cost table row (kNcclAlgorithms' order)
  std::int32_t protocol;   // NCCL's column (kNcclProtocols' order)
  // getCollInfo calls since the worker last cleared them: the forced cell was usable and marked
  // cheapest (`forced`), or NCCL's table held it ignored (-1) or had no such cell (`unavailable`).
  std::uint64_t forced;
  std::uint64_t unavailable;
};
}

}  // namespace nccltune
