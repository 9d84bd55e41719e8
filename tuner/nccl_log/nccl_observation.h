// From NCCL's log to what a profile keeps of it (profile/nccl_observed.h): the facts of one env's
// trials, and explain's verdicts in the profile's terms. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "profile/nccl_observed.h"
#include "search/trial.h"

namespace nccltune {

NcclObservation observation_from_log(const NcclInfoLog& log);

// NCCL's choice at each point (trial.h: ops[i] at sizes[i], nccl-tests names) as its TUNING lines
// say (an op-less line counts for any op), spelled as NCCL_ALGO and NCCL_PROTO values ("NVLS_TREE" ->
// "NVLSTree", "SIMPLE" -> "Simple"); nullopt where no line names the size or a name is not NCCL's.
std::vector<std::optional<NcclChoice>> logged_choices_at(const NcclInfoLog& log,
                                                         const std::vector<std::string>& ops,
                                                         const std::vector<std::uint64_t>& sizes);

// `log` less the TUNING lines of a collective and size that name more than one pair. NCCL's lines
// do not say which communicator made them (src/enqueue.cc, 2.28.9), so in a trial that measured
// split communicators beside the world (profile/comm_shape.h) two choices at one size may be the
// world's and a rail's: neither is known to be the world's. One choice is every communicator's.
NcclInfoLog one_choice_per_size(NcclInfoLog log);

// NCCL's model of `ops` (nccl-tests names; those without a row in the table left out) from one
// tuning table: per collective its enabled pairs (bandwidth above 0), latency rounded to 0.1 us
// and predicted busbw to 0.01 GB/s (nullopt without the table's ranks).
std::map<std::string, std::vector<ModelPair>> nccl_model_of(const NcclModelTable& table,
                                                            const std::vector<std::string>& ops);

std::vector<ObservedVerdict> observed_verdicts(const std::vector<LogVerdict>& verdicts);

}  // namespace nccltune
