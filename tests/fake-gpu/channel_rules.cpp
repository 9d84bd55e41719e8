#include "channel_rules.h"

#include <algorithm>
#include <cmath>

#include "nccl_env.h"

namespace nccltune::fake {

namespace {

constexpr int kWarpSize = 32;
constexpr int kMaxThreads = 640;  // NCCL_MAX_NTHREADS
constexpr int kFirst32KTrafficVersion = 22902;

int valid_threads(const NcclEnv& env, const char* variable, int min, int max) {
  const std::optional<long> set = integer_variable(env, variable);
  if (!set || *set <= 0) return max;
  if (*set % kWarpSize != 0 || *set > max) return max;
  return static_cast<int>(std::max<long>(*set, min));
}

int threads_of(const SizedOp& sized, const ThreadCounts& threads) {
  if (sized.proto == "LL128") return threads.ll128;
  if (sized.proto == "LL" || sized.proto == "Simple") return threads.simple_ll;
  return kMaxThreads;
}

long thread_threshold(const SizedOp& sized) {
  if (sized.proto == "Simple") return 64;  // NCCL_SIMPLE_THREAD_THRESHOLD
  if (sized.proto == "LL" && sized.algo == "Ring") return 8L * sized.nranks;
  return 8;  // NCCL_LL_THREAD_THRESHOLD, NCCL_LL128_THREAD_THRESHOLD
}

}  // namespace

ThreadCounts thread_counts(const NcclEnv& env) {
  ThreadCounts counts;
  counts.simple_ll = valid_threads(env, "NCCL_NTHREADS", 2 * kWarpSize, 512);
  counts.ll128 = valid_threads(env, "NCCL_LL128_NTHREADS", 640 / 4, 640);
  return counts;
}

int channels_at_size(const SizedOp& sized, int channels, const ThreadCounts& threads, bool plugin_set) {
  long nc = std::max(channels, 1);
  // NVLS and NVLSTree keep their own channels, CollNet has a rule of its own (not modelled: the
  // fake never runs CollNet, F20), and PAT's thread count is never set (0), so its loop never runs.
  const bool ring_or_tree = sized.algo == "Ring" || sized.algo == "Tree";
  if (ring_or_tree && !plugin_set) {
    // while (nBytes < nc * nt * threadThreshold) nc-- (down to 1)
    const double per_channel = static_cast<double>(threads_of(sized, threads)) * static_cast<double>(thread_threshold(sized));
    nc = std::clamp(static_cast<long>(std::floor(sized.bytes / per_channel)), 1L, nc);
  }
  const double min_traffic = sized.nccl_version >= kFirst32KTrafficVersion ? 32 << 10 : 16 << 10;
  // ncclFuncTrafficPerByte: AllReduce 2, the rest 1 per byte of nBytes; LL moves 4 times as much.
  const double traffic = (sized.op == "all_reduce" ? 2 : 1) * (sized.proto == "LL" ? 4 : 1) * sized.bytes;
  const long by_traffic = std::max(1L, static_cast<long>(std::ceil(traffic / min_traffic)));
  return static_cast<int>(std::min(nc, by_traffic));
}

}  // namespace nccltune::fake
