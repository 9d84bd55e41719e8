// How many channels one op of a given size runs on (FIDELITY.md F34): NCCL reduces the
// communicator's channels per size, so small messages gain nothing from more channels.
//   - topoGetAlgoInfo (src/enqueue.cc): Ring and Tree drop channels while
//     bytes < channels x threads x threadThreshold (Simple 64, LL128 8, LL 8, Ring LL 8 x nRanks;
//     threads: NCCL_NTHREADS or 512 for Simple and LL, NCCL_LL128_NTHREADS or 640 for LL128);
//     PAT (whose thread count NCCL never sets), NVLS and NVLSTree keep theirs; a tuner plugin's
//     nChannels replaces the count (F14).
//   - the planner (scheduleCollTasksToPlan): each channel carries at least 16 KiB of traffic
//     (32 KiB from NCCL 2.29.2; one cell of that much traffic per channel), traffic being 2 x bytes
//     for AllReduce, bytes otherwise, and 4 times that with LL.
#pragma once

#include <string_view>

#include "fake_model.h"
#include "nccl_env.h"

namespace nccltune::fake {

// The thread counts NCCL_NTHREADS and NCCL_LL128_NTHREADS leave (getNthreads, src/graph/tuning.cc:
// not a multiple of 32 or above the maximum: the maximum; below the minimum: the minimum).
struct ThreadCounts {
  int simple_ll = 512;  // NCCL_SIMPLE_MAX_NTHREADS = NCCL_LL_MAX_NTHREADS
  int ll128 = 640;      // NCCL_LL128_MAX_NTHREADS
};
ThreadCounts thread_counts(const NcclEnv& env);

struct SizedOp {
  std::string_view algo;
  std::string_view proto;
  std::string_view op;  // nccl-tests name
  double bytes = 0;     // nccl-tests' size, NCCL's nBytes
  int nranks = 1;
  int nccl_version = kDefaultNcclVersion;
};

// The channels `sized` runs on out of `channels` (the communicator's for its algorithm, F4).
// `plugin_set`: a tuner plugin chose `channels`, which NCCL then keeps (no per-size reduction).
int channels_at_size(const SizedOp& sized, int channels, const ThreadCounts& threads, bool plugin_set = false);

}  // namespace nccltune::fake
