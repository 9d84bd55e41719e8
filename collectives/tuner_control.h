// The control block of libnccl-tuner-nccltune.so: how a worker talks to nccltune's tuner plugin
// inside its own process (docs/ARCHITECTURE.md, "Pair mode" and "What the plugin served"). The
// plugin exports one instance under kTunerControlSymbol. The worker names the plugin by its path
// in NCCL_TUNER_PLUGIN and dlopens that same path: the loader hands both of them one copy of the
// library, so the worker reads and writes what NCCL's plugin sees. A block in memory, not the
// environment: NCCL reads its environment once, and the pair changes between sweeps of one
// communicator.
//
// Two uses, both off in a job (the block starts zeroed but for its version):
// - pair mode (`active`): the plugin forces one algorithm/protocol pair on every collective, so
//   that one communicator measures several pairs;
// - service counting (`count_service`): the plugin counts the getCollInfo calls where it served
//   its profile's choice and those where it kept NCCL's, and says why it kept NCCL's, so that a
//   confirmation of the plugin's choices knows which sizes it served.
//
// NCCL calls init on the thread that creates the communicator and getCollInfo on the thread that
// enqueues the collective: the worker's one thread, so the block needs no lock.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nccltune {

inline constexpr const char* kTunerControlSymbol = "nccltuneControl_v2";
inline constexpr std::uint32_t kTunerControlVersion = 2;
inline constexpr std::size_t kDeclineReasonBytes = 512;

extern "C" {
struct NcclTuneControl {
  std::uint32_t version;   // kTunerControlVersion
  std::int32_t active;     // 0: the plugin serves its profile; 1: it forces (algorithm, protocol)
  std::int32_t algorithm;  // NCCL's cost table row (kNcclAlgorithms' order)
  std::int32_t protocol;   // NCCL's column (kNcclProtocols' order)
  // Pair mode: getCollInfo calls since the worker last cleared them: the forced cell was usable
  // and marked cheapest (`forced`), or NCCL's table held it ignored (-1) or had no such cell
  // (`unavailable`).
  std::uint64_t forced;
  std::uint64_t unavailable;
  // Service counting, when count_service is 1 (set before the communicator's init): getCollInfo
  // calls that ran the profile's choice for their size (`served`, including a range that leaves
  // the choice to NCCL), and calls that kept NCCL's although the profile has a range for their
  // size, or on a communicator the plugin found no profile for (`declined`). Calls for sizes no
  // range covers count in neither. `declined_why`: the plugin's reason for the latest decline,
  // NUL-terminated, cut to fit.
  std::int32_t count_service;
  std::uint64_t served;
  std::uint64_t declined;
  char declined_why[kDeclineReasonBytes];
};
}

}  // namespace nccltune
