// How NCCL 2.28.9 loads and runs a tuner plugin, and the fake's copy of it (tuner_plugin_host.h):
// src/plugin/plugin_open.cc (openPluginLib: the name as given, then libnccl-tuner-<name>.so),
// src/plugin/tuner.cc (ncclTunerPluginLoad: v5, v4, v3, v2 in that order; 2.30.3 puts v6 first
// and 2.32.6 v7 before v6), src/init.cc (init
// after the topology, its failure fails the communicator; finalize at destroy) and
// src/enqueue.cc (getAlgoInfo, topoGetAlgoInfo: the table and the pick of lowest cost).
#include "tuner_plugin_host.h"

#include <dlfcn.h>
#include <strings.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugin_library.h"

namespace nccltune::fake {
namespace {

using namespace tuner_abi;

constexpr std::string_view kAlgoNames[kNumAlgorithms] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::string_view kProtoNames[kNumProtocols] = {"LL", "LL128", "Simple"};

// The log of the communicator whose plugin call is running on this thread: NCCL's logger takes
// no context, and the plugin logs only from inside init, getCollInfo and finalize.
// initial-exec, as fake_cuda.cpp's current_context (LeakSanitizer and dynamic TLS).
__attribute__((tls_model("initial-exec"))) thread_local DebugLog* current_log = nullptr;

class LogScope {
 public:
  explicit LogScope(DebugLog* log) : saved_(std::exchange(current_log, log)) {}
  ~LogScope() { current_log = saved_; }
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  DebugLog* saved_;
};

// The logger handed to init, as NCCL's ncclDebugLog: INFO lines of the subsystems NCCL_DEBUG_SUBSYS
// lets through, WARN lines always (under NCCL_DEBUG=WARN or more).
__attribute__((format(printf, 5, 6))) void plugin_log(int level, unsigned long flags, const char* /*file*/,
                                                      int /*line*/, const char* format, ...) {
  if (current_log == nullptr || format == nullptr) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  if (level == kLogWarn)
    current_log->warn(text);
  else if (level >= kLogInfo)
    current_log->info(static_cast<std::uint32_t>(flags), text);
}

void info(DebugLog& log, const std::string& text) {
  log.info(kSubsysInit | kSubsysTuning, text);
}

}  // namespace

std::optional<std::pair<int, int>> cost_table_cell(const AlgoProto& pair) {
  std::optional<int> algorithm;
  std::optional<int> protocol;
  for (int a = 0; a < kNumAlgorithms; ++a)
    if (kAlgoNames[a] == pair.algo) algorithm = a;
  for (int p = 0; p < kNumProtocols; ++p)
    if (kProtoNames[p] == pair.proto) protocol = p;
  if (!algorithm || !protocol) return std::nullopt;
  return std::pair{*algorithm, *protocol};
}

AlgoProto cell_pair(int algorithm, int protocol) {
  return AlgoProto{std::string(kAlgoNames[algorithm]), std::string(kProtoNames[protocol])};
}

std::optional<AlgoProto> lowest_cost_pair(const CostTable& table) {
  std::optional<std::pair<int, int>> best;
  float lowest = 3600000000.0f;  // topoGetAlgoInfo's minTime
  for (int a = 0; a < kNumAlgorithms; ++a)
    for (int p = 0; p < kNumProtocols; ++p) {
      const float cost = table[a][p];
      if (cost == kAlgoProtoIgnore || cost < 0) continue;
      if (cost < lowest) {
        lowest = cost;
        best = std::pair{a, p};
      }
    }
  if (!best) return std::nullopt;
  return cell_pair(best->first, best->second);
}

float below_lowest(float lowest) {
  return lowest > 0 ? std::nextafter(lowest, 0.0f) : lowest;
}

TunerPluginHost::Opened TunerPluginHost::open(const std::string& name, int nccl_version,
                                              std::uint64_t comm_id, std::size_t nranks, std::size_t nnodes,
                                              DebugLog& log) {
  Opened result;
  // ncclTunerPluginLoad: `none` loads nothing; unset ("") opens libnccl-tuner.so from the library
  // path, and failing that the net plugin's library (the fake has no net plugin).
  if (strcasecmp(name.c_str(), "none") == 0) return result;
  std::string opened;
  std::vector<std::string> lines;
  void* library = open_plugin_library(name, "libnccl-tuner", "TUNER", opened, lines);
  for (const std::string& line : lines) info(log, line);
  if (library == nullptr) return result;
  std::unique_ptr<TunerPluginHost> host(new TunerPluginHost);
  host->library_ = library;
  host->log_ = &log;
  LogScope scope(&log);
  ncclNvlDomainInfo_v5_t domains{static_cast<int>(nnodes), static_cast<int>(nranks / (nnodes ? nnodes : 1)),
                                 static_cast<int>(nranks / (nnodes ? nnodes : 1))};
  ncclTunerConstants_v5_t constants{};
  ncclTunerConstants_v7_t constants_v7{};
  // NCCL's order (src/plugin/tuner.cc): the newest table this NCCL knows first, then each older one.
  const auto* v7 = nccl_version >= kFirstTunerV7Version
                       ? static_cast<const ncclTuner_v7_t*>(dlsym(library, "ncclTunerPlugin_v7"))
                       : nullptr;
  const auto* v6 = v7 == nullptr && nccl_version >= kFirstTunerV6Version
                       ? static_cast<const ncclTuner_v6_t*>(dlsym(library, "ncclTunerPlugin_v6"))
                       : nullptr;
  const auto using_table = [&](const char* table_name, int version) {
    host->name_ = table_name ? table_name : "";
    host->abi_version_ = version;
    info(log, "TUNER/Plugin: Using " + host->name_ + " (v" + std::to_string(version) + ")");
    info(log, "Successfully loaded external tuner plugin " + opened);
  };
  if (v7 != nullptr) {
    using_table(v7->name, 7);
    host->get_coll_info_ = v7->getCollInfo;
    host->finalize_ = v7->finalize;
    result.init_result =
        v7->init(&host->context_, comm_id, nranks, nnodes, plugin_log, &domains, &constants_v7);
  } else if (v6 != nullptr) {
    using_table(v6->name, 6);
    host->get_coll_info_ = v6->getCollInfo;
    host->finalize_ = v6->finalize;
    result.init_result = v6->init(&host->context_, comm_id, nranks, nnodes, plugin_log, &domains, &constants);
  } else if (const auto* v5 = static_cast<const ncclTuner_v5_t*>(dlsym(library, "ncclTunerPlugin_v5"))) {
    using_table(v5->name, 5);
    host->get_coll_info_ = v5->getCollInfo;
    host->finalize_ = v5->finalize;
    result.init_result = v5->init(&host->context_, comm_id, nranks, nnodes, plugin_log, &domains, &constants);
  } else if (const auto* v4 = static_cast<const ncclTuner_v4_t*>(dlsym(library, "ncclTunerPlugin_v4"))) {
    using_table(v4->name, 4);
    host->get_coll_info_ = v4->getCollInfo;
    host->finalize_ = v4->destroy;
    result.init_result = v4->init(nranks, nnodes, plugin_log, &host->context_);
  } else {
    info(log, "External tuner plugin " + opened + " is unsupported");
    return result;  // the host's destructor closes the library; there is nothing to finalize
  }
  if (result.init_result != nccl_abi::ncclSuccess) {
    result.init_failed = true;
    host->finalize_ = nullptr;  // NCCL never finalizes a context whose init failed
    return result;
  }
  result.host = std::move(host);
  return result;
}

TunerPluginHost::~TunerPluginHost() {
  if (finalize_ != nullptr) {
    LogScope scope(log_);
    if (log_ != nullptr) info(*log_, "TUNER/Plugin: Closing tuner: '" + name_ + "'");
    finalize_(context_);
  }
  if (library_ != nullptr) dlclose(library_);
}

ncclResult_t TunerPluginHost::get_coll_info(int coll_type, std::size_t bytes, CostTable& table,
                                            int& channels) {
  LogScope scope(log_);
  // numPipeOps: NCCL's estimate of tasks per channel for the group (ncclPrepareTasks), 1 for one
  // collective; regBuff 0: the fake registers no buffers.
  return get_coll_info_(context_, coll_type, bytes, 1, reinterpret_cast<float**>(table.data()),
                        kNumAlgorithms, kNumProtocols, 0, &channels);
}

}  // namespace nccltune::fake
