// NCCL_COMM_SPLIT_SHARE_RESOURCES (FIDELITY.md F39): a parent whose config.splitShare is 1 gives
// the communicators ncclCommSplit makes from it its shared resources (sharedRes, src/init.cc):
// its proxy (no proxy of their own, no proxy listen socket in bootstrapSplit), and a cap: a child
// runs on no more coll channels than the top parent (tpNChannels) and no more NVLS channels than
// its parent (src/graph/connect.cc, ncclTopoPostset).
#pragma once

#include "comm_model.h"
#include "fake_model.h"
#include "nccl_env.h"

namespace nccltune::fake {

// The channels a sharing child is capped at: the resource owner's coll channels (tpNChannels)
// and its parent's NVLS channels (0: no NVLS support, no cap).
struct SharedChannels {
  int coll = 0;
  int nvls = 0;
};

// config.splitShare as envConfigOverride and parseCommConfig leave it with the fake's config
// (none): NCCL_COMM_SPLIT_SHARE_RESOURCES when set, read as an integer, and any value but 0 or 1
// is 0. The parent's value decides, read once per process (N9).
bool splits_share_resources(const NcclEnv& env);

// `child` as NCCL caps a communicator split off a sharing parent: its coll channels at the
// owner's, its NVLS channels at the parent's; the channel scale follows the count (F34: the
// model's times are NCCL's at its default channels, so fewer channels cost time).
void cap_to_shared_channels(CommModel& child, const FakeModel& model, const SharedChannels& shared);

}  // namespace nccltune::fake
