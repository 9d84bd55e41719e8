// Tuner ABI v6 (nccl_tuner_v6.h), exported as ncclTunerPlugin_v6: what NCCL looks up first from
// 2.30.3 (src/plugin/tuner.cc) until 2.32.6 put v7 before it. v5's init (its constants and NVLink
// domains unchanged) and getChunkSize.
#include "plugin/nccl_tuner_v6.h"
#include "plugin/tuner_core.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

using namespace nccl_abi;

// v6's cost table is v5's: the profile's names are NCCL's names, looked up once at init.
static_assert(kNcclAlgorithms.size() == kNumAlgorithms && kNcclProtocols.size() == kNumProtocols);
const CostTableIndices kCostTableV6{nccl_algorithm_index, nccl_protocol_index};

ncclResult_t init_v6(void** context, std::uint64_t /*comm_id*/, std::size_t ranks, std::size_t nodes,
                     ncclDebugLogger_t logger, ncclNvlDomainInfo_v6_t* /*nvl_domains*/,
                     ncclTunerConstants_v6_t* /*constants*/) noexcept {
  return tuner_core::init({ranks, nodes, logger, &kCostTableV6}, context);
}

}  // namespace
}  // namespace nccltune

extern "C" {
__attribute__((visibility("default"))) extern const nccltune::nccl_abi::ncclTuner_v6_t ncclTunerPlugin_v6;
const nccltune::nccl_abi::ncclTuner_v6_t ncclTunerPlugin_v6 = {
    nccltune::tuner_core::kPluginName, nccltune::init_v6, nccltune::tuner_core::get_coll_info,
    nccltune::tuner_core::finalize, nccltune::tuner_core::get_chunk_size};
}
