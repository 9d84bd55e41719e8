#include "nvls_force.h"

#include <algorithm>

namespace nccltune::fake {

bool multicast_supported(const FakeModel& model) {
  return model.nccl_log.nvls.value_or(model.algos.contains("NVLS") || model.algos.contains("NVLSTree"));
}

std::optional<std::string> forced_nvls_failure(const FakeModel& model, const NcclEnv& env, const CommNodes& nodes,
                                               int nranks) {
  const std::optional<long> enable = integer_variable(env, "NCCL_NVLS_ENABLE");
  if (!enable || *enable == 0 || *enable == 2 || multicast_supported(model)) return std::nullopt;
  // ncclNvlsInit returns before forcing anything with too few GPUs on the node.
  const int fewest = nodes.fewest_local_ranks > 0 ? nodes.fewest_local_ranks : nranks / std::max(1, nodes.count);
  if (fewest < (model.nccl_version >= 22807 ? 2 : 3)) return std::nullopt;
  // CUCHECK's WARN (src/include/cudawrap.h) for CUDA_ERROR_NOT_SUPPORTED.
  return "Cuda failure 801 'operation not supported'";
}

}  // namespace nccltune::fake
