// How NCCL loads and feeds a profiler plugin, and the fake's copy of it (profiler_plugin_host.h):
// src/plugin/profiler.cc (ncclProfilerPluginLoad: v5 then older tables at 2.28.9, v6 first from
// 2.29.2; ncclProfilerPluginInit; the group, task and kernel channel events),
// src/plugin/plugin_open.cc (openPluginLib) and src/enqueue.cc (topoGetAlgoInfo's nWarps).
#include "profiler_plugin_host.h"

#include <dlfcn.h>
#include <strings.h>

#include <cstdarg>
#include <cstdio>
#include <utility>
#include <vector>

#include "plugin_library.h"

namespace nccltune::fake {
namespace {

using namespace profiler_abi;

// The log of the communicator whose profiler init or finalize runs on this thread: NCCL's logger
// takes no context. A plugin's own threads log nowhere. initial-exec, as fake_cuda.cpp's
// current_context (LeakSanitizer and dynamic TLS).
__attribute__((tls_model("initial-exec"))) thread_local DebugLog* profiler_log_target = nullptr;

class ProfilerLogScope {
 public:
  explicit ProfilerLogScope(DebugLog* log) : saved_(std::exchange(profiler_log_target, log)) {}
  ~ProfilerLogScope() { profiler_log_target = saved_; }
  ProfilerLogScope(const ProfilerLogScope&) = delete;
  ProfilerLogScope& operator=(const ProfilerLogScope&) = delete;

 private:
  DebugLog* saved_;
};

__attribute__((format(printf, 5, 6))) void profiler_log(int level, unsigned long flags, const char* /*file*/,
                                                        int /*line*/, const char* format, ...) {
  if (profiler_log_target == nullptr || format == nullptr) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  if (level == tuner_abi::kLogWarn)
    profiler_log_target->warn(text);
  else if (level >= tuner_abi::kLogInfo)
    profiler_log_target->info(static_cast<std::uint32_t>(flags), text);
}

void profiler_info(DebugLog& log, const std::string& text) {
  log.info(kSubsysInit, text);
}

// A globaltimer reading is nanoseconds since the Unix epoch on NVIDIA's GPUs; the fake's stream
// clocks start at 0, so they are placed at a fixed instant (2026-01-01T00:00:00Z).
constexpr std::uint64_t kGpuTimerEpochNs = 1767225600ull * 1000000000ull;

}  // namespace

std::uint64_t gpu_timer_ns(double stream_clock_us) {
  return kGpuTimerEpochNs + static_cast<std::uint64_t>(stream_clock_us * 1000.0 + 0.5);
}

const char* nccl_datatype_name(int datatype) {
  switch (datatype) {
    case 0: return "ncclInt8";
    case 2: return "ncclInt32";
    case 3: return "ncclUint32";
    case 4: return "ncclInt64";
    case 5: return "ncclUint64";
    case 6: return "ncclFloat16";
    case 7: return "ncclFloat32";
    case 8: return "ncclFloat64";
    case 9: return "ncclBfloat16";
    case 10: return "ncclFloat8e4m3";
    case 11: return "ncclFloat8e5m2";
    default: return "Unknown";  // ncclUint8 (1) included: ncclDatatypeToString has no case for it
  }
}

const char* nccl_algo_name(const std::string& algo) {
  for (const auto& [model, nccl] :
       {std::pair{"Tree", "TREE"}, std::pair{"Ring", "RING"}, std::pair{"CollNetDirect", "COLLNET_DIRECT"},
        std::pair{"CollNetChain", "COLLNET_CHAIN"}, std::pair{"NVLS", "NVLS"}, std::pair{"NVLSTree", "NVLS_TREE"},
        std::pair{"PAT", "PAT"}})
    if (algo == model) return nccl;
  return "Unknown";
}

const char* nccl_proto_name(const std::string& proto) {
  if (proto == "LL") return "LL";
  if (proto == "LL128") return "LL128";
  if (proto == "Simple") return "SIMPLE";
  return "Unknown";
}

int nccl_warps(const std::string& algo, const std::string& proto) {
  // comm->maxThreads at NCCL's defaults (src/graph/tuning.cc): 512 threads for Simple on Ring
  // (NVLink-class bandwidth) and Tree and for LL, 640 for LL128 and the NVLS and CollNet kernels.
  int threads = proto == "LL128" || algo == "NVLS" || algo == "NVLSTree" || algo.starts_with("CollNet") ? 640 : 512;
  if (proto == "Simple" && algo == "Ring") threads += 32;  // the extra warp for sync
  if (algo == "Tree" || algo == "PAT") threads = 640;      // Tree and PAT use all threads always
  return threads / 32;
}

std::unique_ptr<ProfilerPluginHost> ProfilerPluginHost::open(const std::optional<std::string>& name,
                                                             int nccl_version, const ProfiledComm& comm,
                                                             DebugLog& log) {
  if (name) {
    log.info(kSubsysEnv, "NCCL_PROFILER_PLUGIN set by environment to " + *name);
    if (strcasecmp(name->c_str(), "none") == 0) return nullptr;
  }
  std::string opened;
  std::vector<std::string> lines;
  // Unset: NCCL opens libnccl-profiler.so (openPluginLib with a NULL name), then looks in the net
  // plugin's library, which the fake does not have.
  void* library = open_plugin_library(name.value_or(""), "libnccl-profiler", "PROFILER", opened, lines);
  for (const std::string& line : lines) profiler_info(log, line);
  if (library == nullptr) return nullptr;
  std::unique_ptr<ProfilerPluginHost> host(new ProfilerPluginHost);
  host->library_ = library;
  host->log_ = &log;
  const auto* v6 = nccl_version >= kFirstProfilerV6Version
                       ? static_cast<const ncclProfiler_v6_t*>(dlsym(library, "ncclProfiler_v6"))
                       : nullptr;
  const auto* v5 = v6 == nullptr ? static_cast<const ncclProfiler_v5_t*>(dlsym(library, "ncclProfiler_v5")) : nullptr;
  host->table_ = v6 != nullptr ? v6 : v5;
  host->abi_version_ = v6 != nullptr ? 6 : 5;
  if (host->table_ == nullptr) {
    // NCCL would try the v4 to v1 tables here; the fake hosts v5 and v6 only.
    profiler_info(log, "External profiler plugin " + opened + " is unsupported");
    return nullptr;  // the host's destructor closes the library; there is nothing to finalize
  }
  profiler_info(log, std::string("PROFILER/Plugin: Loaded ") + (host->table_->name ? host->table_->name : "") +
                         " (v" + std::to_string(host->abi_version_) + ")");
  profiler_info(log, "Successfully loaded external profiler plugin " + opened);
  ProfilerLogScope scope(&log);
  const ncclResult_t result =
      host->table_->init(&host->context_, comm.comm_hash, &host->mask_, comm.name.empty() ? nullptr : comm.name.c_str(),
                         comm.nnodes, comm.nranks, comm.rank, profiler_log);
  if (result != nccl_abi::ncclSuccess) {
    profiler_info(log, "Profiler init failed with error '" + std::to_string(result) + "'. Continue without profiler.");
    host->table_ = nullptr;  // unloaded without finalize, as ncclProfilerPluginInit does
    return nullptr;
  }
  return host;
}

ProfilerPluginHost::~ProfilerPluginHost() {
  if (table_ != nullptr && context_ != nullptr) {
    ProfilerLogScope scope(log_);
    table_->finalize(context_);
  }
  if (library_ != nullptr) dlclose(library_);
}

void* ProfilerPluginHost::start_group() {
  constexpr int wants = kProfileGroup | kProfileColl | kProfileP2p | kProfileProxyOp | kProfileProxyStep |
                        kProfileKernelCh | kProfileNetPlugin;
  if ((mask_ & wants) == 0) return nullptr;
  ncclProfilerEventDescr_t descr{};
  descr.type = kProfileGroup;
  void* event = nullptr;
  table_->startEvent(context_, &event, &descr);
  return event;
}

void* ProfilerPluginHost::start_collective(const ProfiledCollective& collective, int rank, void* group) {
  constexpr int wants = kProfileColl | kProfileProxyOp | kProfileProxyStep | kProfileKernelCh | kProfileNetPlugin;
  if ((mask_ & wants) == 0) return nullptr;
  ncclProfilerEventDescr_t descr{};
  descr.type = kProfileColl;
  descr.parentObj = nullptr;  // the collective API event's, which the fake does not give
  descr.rank = rank;
  descr.coll.parentGroup = group;
  descr.coll.seqNumber = collective.seq_number;
  descr.coll.func = collective.func;
  descr.coll.sendBuff = collective.send;
  descr.coll.recvBuff = collective.recv;
  descr.coll.count = collective.count;
  descr.coll.root = collective.root;
  descr.coll.datatype = collective.datatype;
  descr.coll.nChannels = static_cast<uint8_t>(collective.channels);
  descr.coll.nWarps = static_cast<uint8_t>(collective.warps);
  descr.coll.algo = collective.algo;
  descr.coll.proto = collective.proto;
  void* event = nullptr;
  table_->startEvent(context_, &event, &descr);
  return event;
}

void ProfilerPluginHost::kernel_channels(void* collective, int channels, std::uint64_t start_ns,
                                         std::uint64_t stop_ns) {
  if ((mask_ & kProfileKernelCh) == 0) return;
  for (int channel = 0; channel < channels; ++channel) {
    ncclProfilerEventDescr_t descr{};
    descr.type = kProfileKernelCh;
    descr.parentObj = collective;
    descr.kernelCh.channelId = static_cast<uint8_t>(channel);
    descr.kernelCh.pTimer = start_ns;
    void* event = nullptr;
    table_->startEvent(context_, &event, &descr);
    if (event == nullptr) continue;  // ncclProfilerStopKernelChEvent needs the handle
    ncclProfilerEventStateArgs_v5_t args{};
    args.kernelCh.pTimer = stop_ns;
    table_->recordEventState(event, kProfilerKernelChStop, &args);
    table_->stopEvent(event);
  }
}

void ProfilerPluginHost::stop(void* event) {
  if (event != nullptr) table_->stopEvent(event);
}

}  // namespace nccltune::fake
