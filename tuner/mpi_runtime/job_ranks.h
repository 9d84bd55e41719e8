// One rank of an MPI job as the jobs' steps see it: the whole job's group, where the ranks sit,
// and how one trial runs on every rank of a group. Tune's trial protocol, the gather of nodes and
// the fleet survey all take it, so it lives below them.
#pragma once

#include "mpi_runtime/node_layout.h"
#include "mpi_runtime/rank_group.h"
#include "mpi_runtime/trial_runner.h"

namespace nccltune {

struct JobRanks {
  RankGroup& group;
  const NodeLayout& layout;
  const TrialRunner& run;
};

}  // namespace nccltune
