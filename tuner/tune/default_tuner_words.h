// What tune says of the tuner NCCL loads by default on the leader's node (topology/
// check_default_tuner.h): its header line, and the profile's note. The trials that measure NCCL's
// defaults and every env set no NCCL_TUNER_PLUGIN, so they run under that tuner as jobs do; pair
// mode and the confirmation through nccltune's tuner plugin set NCCL_TUNER_PLUGIN, which replaces
// it (NCCL loads one tuner), as it does in the jobs a profile's per_size serves.
#pragma once

#include <optional>
#include <string>

#include "topology/check_default_tuner.h"

namespace nccltune {

// "NCCL's default tuner: none" or "NCCL's default tuner: libnccl-tuner.so (/lib/libnccl-tuner.so)
// exports ncclTunerPlugin_v5: baselines run under it; pair-mode trials replace it ...". `logged`:
// the tuner the probe trial's NCCL said it runs (tuner_in_effect), where its log says; it is named
// when the lookup found none (NCCL's search may differ from this process's: libnccl.so's RUNPATH,
// nccl.conf), and then it is what the baselines run under.
std::string default_tuner_header(const std::optional<NcclTunerLibrary>& found,
                                 const std::optional<std::string>& logged, bool pair_mode);

// The profile's note on it, "" when NCCL loads no tuner by default.
std::string default_tuner_note(const std::optional<NcclTunerLibrary>& found,
                               const std::optional<std::string>& logged);

}  // namespace nccltune
