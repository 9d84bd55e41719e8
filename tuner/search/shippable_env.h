// Which NCCL_ALGO / NCCL_PROTO restrictions a profile may ship in its env. Those variables apply
// to every message size of every job, but the tune measured only up to its largest size: a list
// that drops what NCCL uses above it (Simple for multi-GiB all_reduce, say) would make those
// sizes slower where nothing was measured. So a list ships only when it keeps:
//   - the algorithm and the protocol NCCL's defaults used at the largest measured size, for every
//     tuned collective (when NCCL's own account of that size is unknown, nothing can be shown to
//     be kept: no list ships);
//   - Simple, unless sizes of at least 256 MiB were measured;
//   - no (algorithm, protocol) pair that gave wrong data when a trial forced it: NCCL would be
//     free to pick it at some size;
//   - on NCCL 2.24 and later, Ring for every collective that was not tuned: from 2.24.3 a
//     collective that NCCL_ALGO leaves no algorithm fails with ncclInvalidUsage instead of falling
//     back to Ring (topoGetAlgoInfo, src/enqueue.cc), and Broadcast and Reduce run Ring only
//     (src/graph/tuning.cc). A list scoped to the tuned collectives ("allgather:PAT") leaves the
//     others alone.
// NCCL_NVLS_ENABLE never ships a value that forces NVLS (1; anything but 0 and 2): NCCL then
// skips its multicast check and init fails wherever multicast is missing (search/nccl_acts.h).
// A restriction that does not ship stays in the profile's per_size, which the tuner plugin
// applies within the measured range only; the notes say why.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "search/trial.h"

namespace nccltune {

// Simple carries every large message; below this largest measured size it is never excluded.
inline constexpr std::uint64_t kSimpleProvenFromBytes = std::uint64_t{256} << 20;

struct ShipFacts {
  std::uint64_t largest_measured = 0;
  std::vector<std::string> collectives{kAllReduce};      // what was tuned: a list applies to each
  std::map<std::string, NcclChoice> default_at_largest;  // by collective: NCCL's own pick there, unset
  std::vector<NcclChoice> corrupt_pairs;                 // pairs a trial forced and got wrong data from
  bool empty_filter_fails = false;  // NCCL 2.24+: a collective with no algorithm left fails
};

struct ShippableEnv {
  Env env;                         // `env` less the restrictions that may not ship
  std::vector<std::string> notes;  // one line per restriction left out, saying why
};

ShippableEnv shippable_env(const Env& env, const ShipFacts& facts);

// Whether NCCL_ALGO or NCCL_PROTO's value ("Ring,Tree", "^NVLS", "allgather:Ring", unset) lets
// NCCL use `name` for collective `op`.
bool env_allows(const Env& env, const std::string& variable, const std::string& name,
                const std::string& op = kAllReduce);

// The (algorithm, protocol) pairs of failed trials that forced one of each and got wrong data.
std::vector<NcclChoice> corrupt_pairs(const std::vector<FailedTrial>& failed);

}  // namespace nccltune
