// Tuner ABI v4 (nccl_tuner_v4.h), exported as ncclTunerPlugin_v4: what NCCL 2.24 to 2.27 look up
// first, and later NCCLs when a plugin has no newer table (src/plugin/tuner.cc, 2.28.9). Its init
// takes no commId, NVLink domains or constants, and its last entry is called destroy.
#include "plugin/nccl_tuner_v4.h"
#include "plugin/tuner_core.h"
#include "profile/nccl_names.h"

namespace nccltune {
namespace {

using namespace nccl_abi;

// v4's cost table has NCCL_NUM_ALGORITHMS rows and NCCL_NUM_PROTOCOLS columns in NCCL's order
// (Tree ... PAT; LL, LL128, Simple): the profile's names are NCCL's names, looked up once at init.
static_assert(kNcclAlgorithms.size() == kNumAlgorithms && kNcclProtocols.size() == kNumProtocols);
const CostTableIndices kCostTableV4{nccl_algorithm_index, nccl_protocol_index};

ncclResult_t init_v4(std::size_t ranks, std::size_t nodes, ncclDebugLogger_t logger,
                     void** context) noexcept {
  return tuner_core::init({ranks, nodes, logger, &kCostTableV4}, context);
}

}  // namespace
}  // namespace nccltune

extern "C" {
__attribute__((visibility("default"))) extern const nccltune::nccl_abi::ncclTuner_v4_t ncclTunerPlugin_v4;
const nccltune::nccl_abi::ncclTuner_v4_t ncclTunerPlugin_v4 = {
    nccltune::tuner_core::kPluginName, nccltune::init_v4, nccltune::tuner_core::get_coll_info,
    nccltune::tuner_core::finalize};
}
