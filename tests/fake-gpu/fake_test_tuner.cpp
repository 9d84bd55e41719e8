// Test-only NCCL tuner plugins for the fake NCCL's plugin host (tuner_plugin_host.h), built twice:
// libfake_test_tuner.so exports ncclTunerPlugin_v5 and forces Tree/Simple on every collective by
// setting that cell of the cost table to 0 (when NCCL allows it), as a plugin marks its choice;
// libfake_test_tuner_fail.so (FAKE_TEST_TUNER_FAIL_INIT) returns ncclInternalError from init.
// Both log one line through NCCL's logger at init; libfake_test_tuner.so also logs each getCollInfo
// ("TUNER/fake_test: getCollInfo func F nBytes N"), so a test sees how NCCL batches its questions.
#include "nccl_tuner_abi.h"

using namespace nccltune::fake::tuner_abi;

namespace {

constexpr int kTree = 0;
constexpr int kSimple = 2;

int context_tag = 0;  // the context init hands out, checked by getCollInfo and finalize
ncclDebugLogger_t logger = nullptr;

ncclResult_t init(void** context, uint64_t /*comm_id*/, size_t ranks, size_t nodes, ncclDebugLogger_t log,
                  ncclNvlDomainInfo_v5_t* /*domains*/, ncclTunerConstants_v5_t* /*constants*/) {
  logger = log;
  if (log != nullptr)
    log(kLogInfo, 0x40, __FILE__, __LINE__, "TUNER/fake_test: init for %zu ranks on %zu nodes", ranks, nodes);
#ifdef FAKE_TEST_TUNER_FAIL_INIT
  *context = nullptr;
  return nccltune::nccl_abi::ncclInternalError;
#else
  *context = &context_tag;
  return nccltune::nccl_abi::ncclSuccess;
#endif
}

ncclResult_t get_coll_info(void* context, int coll_type, size_t bytes, int /*pipe_ops*/,
                           float** table, int algorithms, int protocols, int /*reg_buff*/,
                           int* /*channels*/) {
  if (context != &context_tag || algorithms <= kTree || protocols <= kSimple)
    return nccltune::nccl_abi::ncclInternalError;
  if (logger != nullptr)
    logger(kLogInfo, 0x40, __FILE__, __LINE__, "TUNER/fake_test: getCollInfo func %d nBytes %zu", coll_type, bytes);
  float* cells = reinterpret_cast<float*>(table);
  float& cell = cells[kTree * protocols + kSimple];
  if (cell >= 0) cell = 0;
  return nccltune::nccl_abi::ncclSuccess;
}

ncclResult_t finalize(void* context) {
  return context == &context_tag ? nccltune::nccl_abi::ncclSuccess : nccltune::nccl_abi::ncclInternalError;
}

}  // namespace

extern "C" __attribute__((visibility("default")))
const ncclTuner_v5_t ncclTunerPlugin_v5 = {"fake_test", init, get_coll_info, finalize};
