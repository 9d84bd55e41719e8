// Tuner ABI v7 (nccl_tuner_v7.h), exported as ncclTunerPlugin_v7: what NCCL 2.32.6 and newer look
// up first (src/plugin/tuner.cc: v7, v6, v5, v4, v3, v2). v6's entry points; init gets v7's
// constants (a fifth compute-capability row), which nccltune does not read.
#include "plugin/nccl_tuner_v7.h"
#include "plugin/tuner_core.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

using namespace nccl_abi;

// v7's cost table is v5's (NCCL_NUM_ALGORITHMS_V5 x NCCL_NUM_PROTOCOLS_V5): the profile's names are
// NCCL's names, looked up once at init.
static_assert(kNcclAlgorithms.size() == kNumAlgorithms && kNcclProtocols.size() == kNumProtocols);
const CostTableIndices kCostTableV7{nccl_algorithm_index, nccl_protocol_index};

ncclResult_t init_v7(void** context, std::uint64_t /*comm_id*/, std::size_t ranks, std::size_t nodes,
                     ncclDebugLogger_t logger, ncclNvlDomainInfo_v7_t* /*nvl_domains*/,
                     ncclTunerConstants_v7_t* /*constants*/) noexcept {
  return tuner_core::init({ranks, nodes, logger, &kCostTableV7}, context);
}

}  // namespace
}  // namespace nccltune

extern "C" {
__attribute__((visibility("default"))) extern const nccltune::nccl_abi::ncclTuner_v7_t ncclTunerPlugin_v7;
const nccltune::nccl_abi::ncclTuner_v7_t ncclTunerPlugin_v7 = {
    nccltune::tuner_core::kPluginName, nccltune::init_v7, nccltune::tuner_core::get_coll_info,
    nccltune::tuner_core::finalize, nccltune::tuner_core::get_chunk_size};
}
