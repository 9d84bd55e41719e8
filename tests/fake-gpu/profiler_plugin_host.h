// ProfilerPluginHost: the fake NCCL's side of NCCL's profiler plugin interface
// (tests/fake-gpu/README.md, "Profiler plugins"). At communicator init NCCL_PROFILER_PLUGIN names
// the library as NCCL's openPluginLib takes it (unset: libnccl-profiler.so; "none": no plugin),
// its table is ncclProfiler_v6 (an NCCL of 2.29.2 or newer) else ncclProfiler_v5, and init runs
// with the communicator's hash, name, nodes, ranks and rank, the plugin setting the mask of the
// events it wants. Each collective then gives it NCCL's events: a group for the launch, the
// collective (NCCL's names of function, type, algorithm and protocol), and one kernel channel
// per channel with the GPU timer at its start and stop; finalize runs at ncclCommDestroy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nccl_debug.h"
#include "nccl_profiler_abi.h"

namespace nccltune::fake {

// The communicator as NCCL's ncclProfilerPluginInit hands it to init.
struct ProfiledComm {
  std::uint64_t comm_hash = 0;
  std::string name;  // config.commName; "" passes NULL
  int nnodes = 1;
  int nranks = 1;
  int rank = 0;
};

// One collective as ncclProfilerStartTaskEvents describes it (NCCL's strings: ncclFuncToString,
// ncclDatatypeToString, ncclAlgoToString, ncclProtoToString).
struct ProfiledCollective {
  std::uint64_t seq_number = 0;
  const char* func = "";
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  int root = 0;
  const char* datatype = "";
  int channels = 1;
  int warps = 0;
  const char* algo = "";
  const char* proto = "";
};

// The GPU's globaltimer for a stream clock in microseconds: nanoseconds from an epoch far from
// zero, since a plugin reads a timer of 0 as "not recorded" (NCCL's globaltimer never is).
std::uint64_t gpu_timer_ns(double stream_clock_us);

// NCCL's names (src/collectives.cc) of a datatype (ncclUint8 has none there: "Unknown"), an
// algorithm and a protocol of the model ("Ring" -> "RING", "Simple" -> "SIMPLE").
const char* nccl_datatype_name(int datatype);
const char* nccl_algo_name(const std::string& algo);
const char* nccl_proto_name(const std::string& proto);
// The warps NCCL's topoGetAlgoInfo gives a pair past its thread threshold (src/enqueue.cc).
int nccl_warps(const std::string& algo, const std::string& proto);

class ProfilerPluginHost {
 public:
  // Loads the plugin `name` (NCCL_PROFILER_PLUGIN's value, nullopt when unset) as the NCCL of
  // `nccl_version` does and runs its init for `comm`; nullptr when there is no plugin, no table,
  // or init failed (NCCL then goes on without it). Its INFO lines go to `log`, which must outlive
  // the host.
  static std::unique_ptr<ProfilerPluginHost> open(const std::optional<std::string>& name, int nccl_version,
                                                  const ProfiledComm& comm, DebugLog& log);

  ProfilerPluginHost(const ProfilerPluginHost&) = delete;
  ProfilerPluginHost& operator=(const ProfilerPluginHost&) = delete;
  ~ProfilerPluginHost();  // finalize, then dlclose

  int abi_version() const { return abi_version_; }
  int activation_mask() const { return mask_; }

  // The events of one launch, each nullptr where the mask leaves it out or the plugin gave none.
  void* start_group();
  void* start_collective(const ProfiledCollective& collective, int rank, void* group);
  // Every channel of `collective`: started at `start_ns`, its stop recorded at `stop_ns`, stopped.
  void kernel_channels(void* collective, int channels, std::uint64_t start_ns, std::uint64_t stop_ns);
  void stop(void* event);

 private:
  ProfilerPluginHost() = default;

  void* library_ = nullptr;
  void* context_ = nullptr;
  const profiler_abi::ncclProfiler_v5_t* table_ = nullptr;
  int abi_version_ = 0;
  int mask_ = 0;
  DebugLog* log_ = nullptr;
};

}  // namespace nccltune::fake
