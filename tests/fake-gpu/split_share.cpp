#include "split_share.h"

#include <algorithm>
#include <optional>

namespace nccltune::fake {

bool splits_share_resources(const NcclEnv& env) {
  const std::optional<long> set = integer_variable(env, "NCCL_COMM_SPLIT_SHARE_RESOURCES");
  return set && *set == 1;
}

void cap_to_shared_channels(CommModel& child, const FakeModel& model, const SharedChannels& shared) {
  // ncclTopoPostset: min(own, tpNChannels) for the maximum and the minimum alike, which is the
  // child's own count capped at the owner's; then the NVLS channels at the parent's (`shared`:
  // the parent has NVLS support).
  if (shared.coll > 0 && child.channels > shared.coll) {
    child.channels = shared.coll;
    child.channel_scale = channel_scale(model, child.channels);
  }
  if (shared.nvls > 0 && child.nvls_channels > shared.nvls) child.nvls_channels = shared.nvls;
}

}  // namespace nccltune::fake
