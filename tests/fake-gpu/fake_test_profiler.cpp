// Test-only NCCL profiler plugins for the fake NCCL's plugin host (profiler_plugin_host.h), built
// twice: libfake_test_profiler.so exports ncclProfiler_v5 only ("fake_test_v5");
// libfake_test_profiler_v6.so (FAKE_TEST_PROFILER_V6) exports ncclProfiler_v6 ("fake_test_v6") as
// well as v5, so a test sees which table an NCCL version takes. Each writes one line per call of a
// communicator to FAKE_TEST_PROFILER_OUT.<commName, or "comm">.<rank> (appended; nothing when the
// variable is unset), and its init sets the
// activation mask FAKE_TEST_PROFILER_MASK gives (default: group, collective and kernel channel):
//   init <table> hash=<commId> name=<commName|(null)> nodes=<n> ranks=<n> rank=<r>
//   group
//   coll func=<f> seq=<n> count=<n> type=<t> root=<r> algo=<a> proto=<p> channels=<n> warps=<n>
//        rank=<r> group=<yes|no>
//   kernel ch=<c> parent=<yes|no> start=<ns>
//   kernel-stop ch=<c> stop=<ns>
//   stop <group|coll|kernel>
//   finalize
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nccl_profiler_abi.h"

using namespace nccltune::fake::profiler_abi;

namespace {

struct Context;

struct Event {
  uint64_t type = 0;  // first, as a plugin's handles start with their type
  int channel = 0;
  const Context* context = nullptr;
};

// A communicator's: its file and every event it handed out, freed at finalize (NCCL may stop a
// collective's event before its channels, which name it as their parent, report).
struct Context {
  std::string file;  // "" when FAKE_TEST_PROFILER_OUT is unset
  std::vector<std::unique_ptr<Event>> events;
};

void say(const Context* context, const char* format, ...) __attribute__((format(printf, 2, 3)));
void say(const Context* context, const char* format, ...) {
  if (context == nullptr || context->file.empty()) return;
  FILE* out = std::fopen(context->file.c_str(), "a");
  if (out == nullptr) return;
  va_list args;
  va_start(args, format);
  std::vfprintf(out, format, args);
  va_end(args);
  std::fputc('\n', out);
  std::fclose(out);
}

#ifdef FAKE_TEST_PROFILER_V6
constexpr const char* kTable = "fake_test_v6";
#else
constexpr const char* kTable = "fake_test_v5";
#endif

ncclResult_t init_with(const char* table, void** context, uint64_t comm_id, int* mask, const char* name, int nodes,
                       int ranks, int rank, ncclDebugLogger_t log) {
  const char* wanted = std::getenv("FAKE_TEST_PROFILER_MASK");
  *mask = wanted ? std::atoi(wanted) : (kProfileGroup | kProfileColl | kProfileKernelCh);
  auto* own = new Context;
  if (const char* out = std::getenv("FAKE_TEST_PROFILER_OUT"))
    own->file = std::string(out) + "." + (name ? name : "comm") + "." + std::to_string(rank);
  *context = own;
  if (log != nullptr) log(3, 0x1, __FILE__, __LINE__, "PROFILER/fake_test: init %s", table);
  say(own, "init %s hash=%llu name=%s nodes=%d ranks=%d rank=%d", table, static_cast<unsigned long long>(comm_id),
      name ? name : "(null)", nodes, ranks, rank);
  return nccltune::nccl_abi::ncclSuccess;
}

ncclResult_t init_v5(void** context, uint64_t comm_id, int* mask, const char* name, int nodes, int ranks, int rank,
                     ncclDebugLogger_t log) {
  return init_with("fake_test_v5", context, comm_id, mask, name, nodes, ranks, rank, log);
}

[[maybe_unused]] ncclResult_t init_v6(void** context, uint64_t comm_id, int* mask, const char* name, int nodes,
                                      int ranks, int rank, ncclDebugLogger_t log) {
  return init_with("fake_test_v6", context, comm_id, mask, name, nodes, ranks, rank, log);
}

ncclResult_t start_event(void* context, void** handle, ncclProfilerEventDescr_t* descr) {
  auto* own = static_cast<Context*>(context);
  Event* event = own->events.emplace_back(std::make_unique<Event>()).get();
  event->type = descr->type;
  event->context = own;
  *handle = event;
  if (descr->type == kProfileGroup) {
    say(own, "group");
  } else if (descr->type == kProfileColl) {
    say(own, "coll func=%s seq=%llu count=%zu type=%s root=%d algo=%s proto=%s channels=%d warps=%d rank=%d group=%s",
        descr->coll.func, static_cast<unsigned long long>(descr->coll.seqNumber), descr->coll.count,
        descr->coll.datatype, descr->coll.root, descr->coll.algo, descr->coll.proto, descr->coll.nChannels,
        descr->coll.nWarps, descr->rank, descr->coll.parentGroup ? "yes" : "no");
  } else if (descr->type == kProfileKernelCh) {
    event->channel = descr->kernelCh.channelId;
    const bool parent = descr->parentObj != nullptr && static_cast<Event*>(descr->parentObj)->type == kProfileColl;
    say(own, "kernel ch=%d parent=%s start=%llu", event->channel, parent ? "yes" : "no",
        static_cast<unsigned long long>(descr->kernelCh.pTimer));
  } else {
    say(own, "event type=%llu", static_cast<unsigned long long>(descr->type));
  }
  return nccltune::nccl_abi::ncclSuccess;
}

ncclResult_t stop_event(void* handle) {
  auto* event = static_cast<Event*>(handle);
  say(event->context, "stop %s", event->type == kProfileGroup ? "group" : event->type == kProfileColl ? "coll" : "kernel");
  return nccltune::nccl_abi::ncclSuccess;
}

ncclResult_t record_state(void* handle, int state, ncclProfilerEventStateArgs_v5_t* args) {
  auto* event = static_cast<Event*>(handle);
  if (state == kProfilerKernelChStop)
    say(event->context, "kernel-stop ch=%d stop=%llu", event->channel, static_cast<unsigned long long>(args->kernelCh.pTimer));
  return nccltune::nccl_abi::ncclSuccess;
}

ncclResult_t finalize(void* context) {
  say(static_cast<const Context*>(context), "finalize");
  delete static_cast<Context*>(context);
  return nccltune::nccl_abi::ncclSuccess;
}

}  // namespace

extern "C" __attribute__((visibility("default")))
const ncclProfiler_v5_t ncclProfiler_v5 = {"fake_test_v5", init_v5, start_event, stop_event, record_state, finalize};
#ifdef FAKE_TEST_PROFILER_V6
extern "C" __attribute__((visibility("default")))
const ncclProfiler_v6_t ncclProfiler_v6 = {kTable, init_v6, start_event, stop_event, record_state, finalize};
#endif
