// Tuner ABI v5 (nccl_tuner_v5.h), exported as ncclTunerPlugin_v5: what NCCL 2.28 and 2.29 look up
// first (src/plugin/tuner.cc, 2.28.9), and 2.30.3+ after v6. nccltune reads neither the NVLink
// domains nor the constants: it marks measured cells in the cost table instead.
#include "plugin/nccl_tuner_v5.h"
#include "plugin/tuner_core.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

using namespace nccl_abi;

// v5's cost table: NCCL_NUM_ALGORITHMS_V5 x NCCL_NUM_PROTOCOLS_V5 in NCCL's order, so the profile's
// names are NCCL's names, looked up once at init.
static_assert(kNcclAlgorithms.size() == kNumAlgorithms && kNcclProtocols.size() == kNumProtocols);
const CostTableIndices kCostTableV5{nccl_algorithm_index, nccl_protocol_index};

ncclResult_t init_v5(void** context, std::uint64_t /*comm_id*/, std::size_t ranks, std::size_t nodes,
                     ncclDebugLogger_t logger, ncclNvlDomainInfo_v5_t* /*nvl_domains*/,
                     ncclTunerConstants_v5_t* /*constants*/) noexcept {
  return tuner_core::init({ranks, nodes, logger, &kCostTableV5}, context);
}

}  // namespace
}  // namespace nccltune

extern "C" {
__attribute__((visibility("default"))) extern const nccltune::nccl_abi::ncclTuner_v5_t ncclTunerPlugin_v5;
const nccltune::nccl_abi::ncclTuner_v5_t ncclTunerPlugin_v5 = {
    nccltune::tuner_core::kPluginName, nccltune::init_v5, nccltune::tuner_core::get_coll_info,
    nccltune::tuner_core::finalize};
}
