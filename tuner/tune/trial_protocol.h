// How tune's ranks run its trials together: rank 0 (the leader) runs the strategy and sends each
// trial to every rank as one broadcast message on the whole job; the ranks of the node count the
// trial is for run it on their group (tune --node-counts: a communicator of that many whole nodes),
// the others wait for the next message, until rank 0 says stop. The messages are JSON:
// {"cmd":"trial","count":N,"request":{...},"nccl_log":bool} and {"cmd":"stop","exit":N}.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "mpi_runtime/job_ranks.h"
#include "search/trial.h"

namespace nccltune {

// How NCCL's logs of a group's trial reach its rank 0: each node's ranks send theirs to the
// node's first rank (`node`), which reads them and sends one summary per communicator shape (nccl_log/node_log_summary.h)
// to rank 0 over the nodes' first ranks (`leaders`, nullptr on the other ranks). So rank 0 holds
// a few summaries per node, never every rank's text.
struct LogGroups {
  std::unique_ptr<RankGroup> node;
  std::unique_ptr<RankGroup> leaders;
};
// Every rank of `group` calls it.
LogGroups log_groups(RankGroup& group, const NodeLayout& layout);

// Where one node count's trials run: its group (nullptr on a rank outside it), the groups its
// NCCL logs travel in, and the spec each of its ranks runs (its rank and size in that group).
struct CountGroup {
  std::unique_ptr<RankGroup> group;
  LogGroups logs;
  TrialSpec spec;
};
using CountGroups = std::map<int, CountGroup>;  // by node count

// Runs `spec` on every rank of `group` with NCCL's log in a private directory of each rank
// (mpi_runtime/nccl_log_capture.h); the group's rank 0 gets in `node_logs` one summary of NCCL's
// log per node and communicator shape (node_logs_by_communicator; the world's first on each node)
// (a rank whose directory could not be made says why on its stderr).
TrialResult run_with_nccl_log(RankGroup& group, const LogGroups& logs, const TrialRunner& run, TrialSpec spec,
                              std::vector<NcclInfoLog>& node_logs);

// The leader's side of one trial: sends `request` to every rank, runs it on `count`'s group and
// returns its measurement; with `nccl_logs`, its ranks run it with NCCL's log and rank 0 gets
// one summary per node and communicator shape.
TrialMeasurement lead_trial(const JobRanks& ranks, const CountGroups& groups, int count,
                            const TrialRequest& request, std::vector<NcclInfoLog>* nccl_logs);

// The others' side: runs the leader's trials of the counts this rank is in, until it says stop;
// returns the exit code it sent.
int follow(const JobRanks& ranks, const CountGroups& groups);

// Tells every rank to stop with `exit_code`, and returns it.
int stop_followers(const JobRanks& ranks, int exit_code);

}  // namespace nccltune
